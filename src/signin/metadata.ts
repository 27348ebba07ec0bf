// RFC 8414 authorization server metadata at /.well-known/oauth-authorization-server, so that stock
// OAuth clients (oauth4webapi, openid-client, Auth.js) configure themselves from PUBLIC_URL. Every
// value describes what the endpoints in this folder accept; it is computed once per process.
// Not OpenID Connect: there is no id_token, userinfo or JWKS (the session's address is in the token
// response and /api/v0/auth/status).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { GRANT_TYPES } from './apps.ts';
import { SCOPE_IDS } from './scopes.ts';

export const METADATA_PATH = '/.well-known/oauth-authorization-server';

const CLIENT_AUTH_METHODS = ['client_secret_basic', 'client_secret_post'];

export function authorizationServerMetadata(publicUrl: string) {
  return {
    issuer: publicUrl,
    authorization_endpoint: `${publicUrl}/signin/authorize`,
    token_endpoint: `${publicUrl}/api/v0/signin/token`,
    revocation_endpoint: `${publicUrl}/api/v0/signin/token/revoke`,
    scopes_supported: [...SCOPE_IDS],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: [...GRANT_TYPES],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
    // the revocation endpoint also takes a bare token: whoever holds it may end its session
    revocation_endpoint_auth_methods_supported: [...CLIENT_AUTH_METHODS, 'none'],
    service_documentation: `${publicUrl}/docs`,
  };
}

const Metadata = Type.Object({
  issuer: Type.String(),
  authorization_endpoint: Type.String(),
  token_endpoint: Type.String(),
  revocation_endpoint: Type.String(),
  scopes_supported: Type.Array(Type.String()),
  response_types_supported: Type.Array(Type.String()),
  response_modes_supported: Type.Array(Type.String()),
  grant_types_supported: Type.Array(Type.String()),
  code_challenge_methods_supported: Type.Array(Type.String()),
  token_endpoint_auth_methods_supported: Type.Array(Type.String()),
  revocation_endpoint_auth_methods_supported: Type.Array(Type.String()),
  service_documentation: Type.String(),
});

export function registerMetadata(app: FastifyInstance, ctx: AppContext): void {
  const body = JSON.stringify(authorizationServerMetadata(ctx.config.publicUrl));
  app.get(
    METADATA_PATH,
    {
      schema: {
        tags: ['sign-in'],
        summary: 'OAuth 2.0 authorization server metadata (RFC 8414); the token and revocation endpoints also need x-api-key',
        response: { 200: Metadata },
      },
    },
    async (_request, reply) => reply.header('content-type', 'application/json; charset=utf-8').header('cache-control', 'public, max-age=3600').send(body),
  );
}
