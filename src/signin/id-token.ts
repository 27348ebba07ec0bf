// OpenID Connect id_tokens (OpenID Connect Core 1.0 §2, §3.1.3.6), issued by the token endpoint when
// the access token carries the `openid` scope. Signed (ES256) by the current shared key
// (signing-keys.ts), imported once per process with its protected header.
import { hash } from 'node:crypto';
import type { AppContext } from '../context.ts';
import type { Chain } from '../shared/addresses.ts';
import { ID_TOKEN_TTL_MS } from './lifetimes.ts';
import { currentSigner, signJws } from './signing-keys.ts';

export const OPENID_SCOPE = 'openid';

/** The identity claims of an id_token and of userinfo: `sub` is the native address, whatever form was signed. */
export function identityClaims(a: { address: string; chain: Chain; platformAddress: string }) {
  return { sub: a.platformAddress, address: a.address, chain: a.chain, platformAddress: a.platformAddress };
}

/** §3.1.3.6: base64url of the left half of SHA-256 of the access token's ASCII octets. */
export function atHash(accessToken: string): string {
  return hash('sha256', accessToken, 'buffer').subarray(0, 16).toString('base64url');
}

export interface IdTokenInput {
  clientId: string;
  address: string;
  chain: Chain;
  platformAddress: string;
  /** When the wallet proof was approved (UNIX ms): the same on every refresh of the family. */
  authTime: number;
  /** The authorization request's nonce; only the code exchange carries it (not a refresh). */
  nonce: string | null;
  accessToken: string;
  now: number;
}

export async function signIdToken(ctx: AppContext, i: IdTokenInput): Promise<string> {
  const pending = currentSigner(ctx, i.now);
  const signer = pending instanceof Promise ? await pending : pending;
  const iat = Math.floor(i.now / 1000);
  const claims = {
    iss: ctx.config.publicUrl,
    ...identityClaims(i),
    aud: i.clientId,
    exp: iat + ID_TOKEN_TTL_MS / 1000,
    iat,
    auth_time: Math.floor(i.authTime / 1000),
    ...(i.nonce !== null ? { nonce: i.nonce } : {}),
    at_hash: atHash(i.accessToken),
  };
  // A JWS over the claims' JSON (RFC 7519 §7.1), under the key's protected header made once by jose
  // (jose's SignJWT would structuredClone and re-check claims built just above, and serialise the
  // same header again for every token).
  return signJws(signer, Buffer.from(JSON.stringify(claims)).toString('base64url'));
}
