// Request and response schemas of the sign-in routes.
import { Type } from 'typebox';
import { NumberString } from '../shared/schemas.ts';

const Str = (maxLength: number, description?: string) =>
  Type.String({ maxLength, ...(description ? { description } : {}) });

export const AuthorizeParams = {
  client_id: Str(128, 'The developer app client ID'),
  redirect_uri: Type.Optional(Str(2048, 'One of the app redirect URIs; omit to show the code to the user instead')),
  scope: Type.Optional(Str(1024, 'Scope ids separated by spaces or commas')),
  state: Type.Optional(Str(1024, 'Opaque value echoed back with the code')),
  code_challenge: Type.Optional(Str(128, 'PKCE S256 challenge: base64url(SHA-256(code_verifier))')),
  code_challenge_method: Type.Optional(Str(16, 'S256 (plain is not supported)')),
  nonce: Type.Optional(Str(1024, 'OpenID Connect: a value the id_token carries back (the nonce claim)')),
};

export const ChallengeBody = Type.Object(
  { ...AuthorizeParams, address: Str(128, '0x EVM address (EIP-191) or native bech32 address (ADR-36)') },
  { additionalProperties: false },
);

export const ChallengeResponse = Type.Object({
  requestId: Type.String(),
  message: Type.String({ description: 'The exact text to sign (EIP-4361)' }),
  expiresAt: NumberString,
});

/**
 * Room for smart-contract wallet signatures: ERC-1271 signatures (a WebAuthn assertion, several
 * owners' signatures) and ERC-6492 wrappers (with the factory call) run to kilobytes.
 */
export const MAX_SIGNATURE_LENGTH = 16_384;
export const SIGNATURE_DESCRIPTION =
  "EVM: 0x 65-byte personal_sign signature, or (with EVM_RPC_URL set) a smart-contract account's ERC-1271 or ERC-6492 signature in 0x hex; native: base64 64-byte ADR-36 signature";

export const ApproveBody = Type.Object(
  {
    requestId: Str(64),
    signature: Str(MAX_SIGNATURE_LENGTH, SIGNATURE_DESCRIPTION),
    publicKey: Type.Optional(Str(128, 'Native addresses: base64 33-byte compressed secp256k1 public key')),
  },
  { additionalProperties: false },
);

export const ApproveResponse = Type.Object({
  code: Type.String(),
  state: Type.Optional(Type.String()),
  redirectUrl: Type.Optional(Type.String()),
});

// RFC 6749 §3.2: unrecognized token-request parameters are ignored, so these bodies stay open.
export const TokenBody = Type.Object(
  {
    grant_type: Type.Optional(Str(64)),
    code: Type.Optional(Str(256)),
    redirect_uri: Type.Optional(Str(2048)),
    client_id: Type.Optional(Str(256)),
    client_secret: Type.Optional(Str(256)),
    refresh_token: Type.Optional(Str(256)),
    code_verifier: Type.Optional(Str(256)),
    scope: Type.Optional(Str(1024)),
    options: Type.Optional(
      Type.Union([
        Type.Object(
          { issuedAtTimeWindowMs: Type.Optional(Type.Integer({ minimum: 0 })) },
          { additionalProperties: false },
        ),
        Type.String({ maxLength: 1024, description: 'The options object as JSON text (form bodies)' }),
      ]),
    ),
  },
  { additionalProperties: true },
);

export const TokenResponse = Type.Object({
  address: Type.String(),
  chain: Type.Union([Type.Literal('ETH'), Type.Literal('Cosmos'), Type.Literal('Unknown')]),
  platformAddress: Type.String(),
  verificationResponse: Type.Object({ success: Type.Boolean(), errorMessage: Type.Optional(Type.String()) }),
  access_token: Type.String(),
  token_type: Type.Literal('Bearer'),
  access_token_expires_at: NumberString,
  refresh_token: Type.String(),
  refresh_token_expires_at: NumberString,
  expires_in: Type.Integer(),
  scope: Type.String(),
  id_token: Type.Optional(
    Type.String({ description: 'OpenID Connect id_token (ES256 JWT), when the access token holds the openid scope' }),
  ),
});

/** RFC 6749 §5.2 error; the API-key gate's own 401 (`{ errorMessage, unauthorized }`) shares the status. */
export const OAuthErrorResponse = Type.Object(
  { error: Type.Optional(Type.String()), error_description: Type.Optional(Type.String()), errorMessage: Type.String() },
  { additionalProperties: true },
);

export const RevokeBody = Type.Object(
  {
    token: Type.Optional(Str(256)),
    token_type_hint: Type.Optional(Str(64)),
    client_id: Type.Optional(Str(256)),
    client_secret: Type.Optional(Str(256)),
  },
  { additionalProperties: true },
);

const SocialIdentitySchema = Type.Object(
  { id: Type.String(), username: Type.String() },
  { description: 'Account linked through the connections flow' },
);

export const StatusResponse = Type.Object({
  signedIn: Type.Boolean(),
  address: Type.String(),
  platformAddress: Type.String(),
  chain: Type.String(),
  scopes: Type.Array(Type.Object({ scopeName: Type.String(), scopeId: Type.String() })),
  message: Type.String(),
  email: Type.String(),
  // linked social accounts (connections), each present only when linked
  discord: Type.Optional(SocialIdentitySchema),
  github: Type.Optional(SocialIdentitySchema),
  google: Type.Optional(SocialIdentitySchema),
  twitch: Type.Optional(SocialIdentitySchema),
  twitter: Type.Optional(SocialIdentitySchema),
});

export const DeveloperAppDoc = Type.Object({
  clientId: Type.String(),
  name: Type.String(),
  description: Type.String(),
  image: Type.String(),
  redirectUris: Type.Array(Type.String()),
  grantTypes: Type.Array(Type.String()),
  createdBy: Type.Union([Type.String(), Type.Null()]),
  createdAt: NumberString,
  updatedAt: NumberString,
});

const RedirectUris = Type.Array(Str(2048), { maxItems: 20 });

export const CreateAppBody = Type.Object(
  {
    name: Str(64),
    redirectUris: RedirectUris,
    description: Type.Optional(Str(1000)),
    image: Type.Optional(Str(2048)),
  },
  { additionalProperties: false },
);

export const UpdateAppBody = Type.Object(
  {
    clientId: Str(128),
    name: Type.Optional(Str(64)),
    description: Type.Optional(Str(1000)),
    image: Type.Optional(Str(2048)),
    redirectUris: Type.Optional(RedirectUris),
    rotateClientSecret: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const DeleteAppBody = Type.Object({ clientId: Str(128) }, { additionalProperties: false });

export const FetchAppsBody = Type.Object(
  { clientId: Type.Optional(Str(128)), bookmark: Type.Optional(Type.String({ maxLength: 2048 })) },
  { additionalProperties: false },
);

export const Pagination = Type.Object({ bookmark: Type.String(), hasMore: Type.Boolean() });
