// Sign-in tables (see migrations 0002_signin, 0007_signin_token_selectors and 0022_signin_openid).
// Secrets, codes and token verifiers appear only as SHA-256 hex; signing keys only sealed.
import type { Chain } from '../shared/addresses.ts';

export interface SigninAppTable {
  client_id: string;
  client_secret_hash: string;
  name: string;
  description: string;
  image: string;
  /** JSON array of exact redirect URIs. */
  redirect_uris: string;
  /** JSON array of grant types the client may use. */
  grant_types: string;
  created_by: string | null;
  created_at: number;
  updated_at: number;
}

export interface SigninRequestTable {
  request_id: string;
  client_id: string;
  redirect_uri: string | null;
  scopes: string;
  state: string | null;
  code_challenge: string | null;
  code_challenge_method: string | null;
  address: string;
  platform_address: string;
  chain: Chain;
  /** The EIP-4361 message nonce (this service's). */
  nonce: string;
  /** The OpenID Connect `nonce` of the authorization request (the client's), or null. */
  oidc_nonce: string | null;
  message: string;
  issued_at: number;
  expires_at: number;
  consumed_at: number | null;
}

export interface SigninAuthorizationTable {
  authorization_id: string;
  code_hash: string;
  client_id: string;
  redirect_uri: string | null;
  /** Granted scope ids (JSON); refresh tokens carry these. */
  scopes: string;
  code_challenge: string | null;
  address: string;
  platform_address: string;
  chain: Chain;
  message: string;
  created_at: number;
  code_expires_at: number;
  code_consumed_at: number | null;
  /** Absolute end of the token family (first grant + SIGNIN_SESSION_MAX_AGE_DAYS), or null: none. */
  expires_at: number | null;
  revoked_at: number | null;
  /** SHA-256 hex of the current access token's verifier (the token is `<authorization_id>.<verifier>`); not indexed. */
  access_hash: string | null;
  access_scopes: string | null;
  access_expires_at: number | null;
  /** SHA-256 hex of the current refresh token's verifier; not indexed. */
  refresh_hash: string | null;
  refresh_expires_at: number | null;
  /** The authorization request's OpenID Connect `nonce`, put in the id_token of the code exchange. */
  oidc_nonce: string | null;
}

/** The columns of an authorization whose code is fresh: not exchanged, no tokens issued, not revoked. */
export const UNUSED_CODE = {
  code_consumed_at: null,
  expires_at: null,
  revoked_at: null,
  access_hash: null,
  access_scopes: null,
  access_expires_at: null,
  refresh_hash: null,
  refresh_expires_at: null,
} as const satisfies Partial<SigninAuthorizationTable>;

/** Primary key (authorization_id, token_hash): a family's rotated refresh tokens are stored together. */
export interface SigninRotatedTokenTable {
  /** SHA-256 hex of the rotated refresh token's verifier. */
  token_hash: string;
  authorization_id: string;
  rotated_at: number;
}

/** id_token signing keys (signing-keys.ts), one per generation; the newest published one signs. */
export interface SigninSigningKeyTable {
  generation: number;
  kid: string;
  alg: string;
  /** The public JWK as the JWKS serves it (JSON). */
  public_jwk: string;
  /** The private JWK (JSON), sealed with the keyring. */
  private_jwk_sealed: string;
  created_at: number;
}

export interface SigninTables {
  signin_apps: SigninAppTable;
  signin_requests: SigninRequestTable;
  signin_authorizations: SigninAuthorizationTable;
  signin_rotated_tokens: SigninRotatedTokenTable;
  signin_signing_keys: SigninSigningKeyTable;
}

// Its tables join the database's type (db/schema.ts).
declare module '../db/schema.ts' {
  interface Database extends SigninTables {}
}

export const parseList = (json: string): string[] => JSON.parse(json) as string[];
