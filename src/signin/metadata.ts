// RFC 8414 authorization server metadata at /.well-known/oauth-authorization-server, and the OpenID
// Connect Discovery document at /.well-known/openid-configuration, so that stock OAuth and OpenID
// Connect clients (oauth4webapi, openid-client, Auth.js) configure themselves from PUBLIC_URL. The
// OpenID document is the RFC 8414 one plus the OpenID-only fields: both describe one server. Every
// value describes what the endpoints in this folder accept; it is computed once per process.
import type { FastifyInstance } from 'fastify';
import { type TSchema, Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { GRANT_TYPES } from './apps.ts';
import { SCOPE_IDS } from './scopes.ts';
import { ID_TOKEN_ALG } from './signing-keys.ts';

export const METADATA_PATH = '/.well-known/oauth-authorization-server';
export const OPENID_CONFIGURATION_PATH = '/.well-known/openid-configuration';
export const JWKS_PATH = '/.well-known/jwks.json';
export const USERINFO_PATH = '/api/v0/signin/userinfo';

/** What an id_token and userinfo say (id-token.ts). */
export const CLAIMS_SUPPORTED = [
  'iss',
  'sub',
  'aud',
  'exp',
  'iat',
  'auth_time',
  'nonce',
  'at_hash',
  'address',
  'chain',
  'platformAddress',
];

const CLIENT_AUTH_METHODS = ['client_secret_basic', 'client_secret_post'];

export function authorizationServerMetadata(publicUrl: string) {
  return {
    issuer: publicUrl,
    authorization_endpoint: `${publicUrl}/signin/authorize`,
    token_endpoint: `${publicUrl}/api/v0/signin/token`,
    userinfo_endpoint: `${publicUrl}${USERINFO_PATH}`,
    jwks_uri: `${publicUrl}${JWKS_PATH}`,
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

/** OpenID Connect Discovery 1.0 §3: the RFC 8414 document plus what only OpenID Connect defines. */
export function openIdConfiguration(publicUrl: string) {
  return {
    ...authorizationServerMetadata(publicUrl),
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: [ID_TOKEN_ALG],
    claims_supported: CLAIMS_SUPPORTED,
    prompt_values_supported: ['consent', 'login'],
    claims_parameter_supported: false,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
  };
}

const Metadata = Type.Object({
  issuer: Type.String(),
  authorization_endpoint: Type.String(),
  token_endpoint: Type.String(),
  userinfo_endpoint: Type.String(),
  jwks_uri: Type.String(),
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

const OpenIdConfiguration = Type.Object({
  ...Metadata.properties,
  subject_types_supported: Type.Array(Type.String()),
  id_token_signing_alg_values_supported: Type.Array(Type.String()),
  claims_supported: Type.Array(Type.String()),
  prompt_values_supported: Type.Array(Type.String()),
  claims_parameter_supported: Type.Boolean(),
  request_parameter_supported: Type.Boolean(),
  request_uri_parameter_supported: Type.Boolean(),
});

export function registerMetadata(app: FastifyInstance, ctx: AppContext): void {
  /** A discovery document: built once, served as cacheable JSON. */
  const document = (path: string, summary: string, schema: TSchema, doc: unknown) => {
    const body = JSON.stringify(doc);
    app.get(path, { schema: { tags: ['sign-in'], summary, response: { 200: schema } } }, async (_request, reply) =>
      reply
        .header('content-type', 'application/json; charset=utf-8')
        .header('cache-control', 'public, max-age=3600')
        .send(body),
    );
  };
  document(
    METADATA_PATH,
    'OAuth 2.0 authorization server metadata (RFC 8414); the token and revocation endpoints also need x-api-key',
    Metadata,
    authorizationServerMetadata(ctx.config.publicUrl),
  );
  document(
    OPENID_CONFIGURATION_PATH,
    'OpenID Connect Discovery document (the RFC 8414 metadata plus the OpenID fields); the token and userinfo endpoints also need x-api-key',
    OpenIdConfiguration,
    openIdConfiguration(ctx.config.publicUrl),
  );
}
