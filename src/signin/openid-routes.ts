// OpenID Connect routes beside the token endpoint: the JWKS (public, like the discovery documents)
// and userinfo (GET and POST, behind the API-key gate like every /api/ route, with the access token
// as a Bearer credential and RFC 6750 errors).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { ApiError } from '../shared/errors.ts';
import { identityClaims, OPENID_SCOPE } from './id-token.ts';
import { JWKS_PATH, USERINFO_PATH } from './metadata.ts';
import { publishedJwks } from './signing-keys.ts';
import { lookupAccessToken } from './tokens.ts';

const REALM = 'platform';

/** RFC 6750 §3: the challenge names the error (none when the request carried no token at all). */
function bearerError(
  status: 400 | 401 | 403,
  error: 'invalid_request' | 'invalid_token' | 'insufficient_scope' | null,
  description: string,
): ApiError {
  const params = [`realm="${REALM}"`];
  if (error) params.push(`error="${error}"`, `error_description="${description.replace(/["\\]/g, '')}"`);
  if (error === 'insufficient_scope') params.push(`scope="${OPENID_SCOPE}"`);
  return new ApiError(status, description, error ? { error, error_description: description } : {}, {
    'www-authenticate': `Bearer ${params.join(', ')}`,
  });
}

/** The access token of `Authorization: Bearer <token>` (RFC 6750 §2.1, the one method accepted). */
function accessToken(request: FastifyRequest): string {
  const h = request.headers.authorization;
  if (h === undefined || h === '')
    throw bearerError(401, null, 'The userinfo endpoint needs an access token: Authorization: Bearer <access_token>.');
  const m = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/i.exec(h);
  if (!m) throw bearerError(400, 'invalid_request', 'The Authorization header must be Bearer <access_token>.');
  return m[1];
}

const UserInfo = Type.Object({
  sub: Type.String({ description: 'The native (platform) address' }),
  address: Type.String({ description: 'The address as the user signed in with it' }),
  chain: Type.String(),
  platformAddress: Type.String(),
});

const BearerErrorResponse = Type.Object(
  { error: Type.Optional(Type.String()), error_description: Type.Optional(Type.String()), errorMessage: Type.String() },
  { additionalProperties: true },
);

const Jwk = Type.Object({
  kty: Type.String(),
  crv: Type.String(),
  x: Type.String(),
  y: Type.String(),
  kid: Type.String(),
  alg: Type.String(),
  use: Type.String(),
});

export function registerOpenIdRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get(
    JWKS_PATH,
    {
      schema: {
        tags: ['sign-in'],
        summary:
          'The public keys that sign id_tokens (RFC 7517 JWK Set): the current key, a new one before it signs, and replaced ones until their id_tokens have expired',
        response: { 200: Type.Object({ keys: Type.Array(Jwk) }) },
      },
    },
    async (_request, reply) => {
      // short: a rotation publishes the new key a minute before it signs (signing-keys.ts)
      reply.header('cache-control', 'public, max-age=60');
      return publishedJwks(ctx, ctx.clock.now());
    },
  );

  const userinfo = async (request: FastifyRequest, reply: { header(k: string, v: string): unknown }) => {
    reply.header('cache-control', 'no-store');
    const token = accessToken(request);
    const info = await lookupAccessToken(ctx, token);
    if (!info) throw bearerError(401, 'invalid_token', 'The access token is unknown, expired or revoked.');
    if (!info.session.scopes.includes(OPENID_SCOPE))
      throw bearerError(403, 'insufficient_scope', 'The access token was not granted the openid scope.');
    return identityClaims(info.session);
  };
  const schema = {
    tags: ['sign-in'],
    summary: 'OpenID Connect userinfo: the identity claims of the access token (Bearer, with the openid scope)',
    response: { 200: UserInfo, 400: BearerErrorResponse, 401: BearerErrorResponse, 403: BearerErrorResponse },
  };
  app.get(USERINFO_PATH, { schema }, userinfo);
  // a POST carries no parameters (the token goes in the header): no body, or a JSON one, ignored
  app.post(
    USERINFO_PATH,
    {
      schema: {
        ...schema,
        description: 'Same as GET. The token goes in the Authorization header; a body (JSON) is ignored.',
      },
    },
    userinfo,
  );
}
