// Sign-in routes. Thin handlers: parse, call the domain functions (flow.ts, tokens.ts, apps.ts), shape.
// The challenge/approve routes and the authorize page run in the user's browser: no API key.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Routes } from '../shared/capability.ts';
import { listConnections } from '../connections/storage.ts';
import type { AppContext } from '../context.ts';
import { badRequest, notFound } from '../shared/errors.ts';
import { errorResponses } from '../shared/schemas.ts';
import { bearerToken, requireSession, setSessionResolver } from '../shared/session.ts';
import {
  createDeveloperApp,
  deleteDeveloperApp,
  getDeveloperApp,
  listDeveloperApps,
  updateDeveloperApp,
  type DeveloperApp,
} from './apps.ts';
import { challengeLimits } from './challenge-limits.ts';
import { approveChallenge, createChallenge } from './flow.ts';
import { oauthError } from './oauth-errors.ts';
import { registerAuthorizePage } from './page.ts';
import { registerMetadata } from './metadata.ts';
import { registerOpenIdRoutes } from './openid-routes.ts';
import { currentSigner, ensureSigningKey } from './signing-keys.ts';
import {
  ApproveBody,
  ApproveResponse,
  ChallengeBody,
  ChallengeResponse,
  CreateAppBody,
  DeleteAppBody,
  DeveloperAppDoc,
  FetchAppsBody,
  OAuthErrorResponse,
  Pagination,
  RevokeBody,
  StatusResponse,
  TokenBody,
  TokenResponse,
  UpdateAppBody,
} from './schemas.ts';
import { scopeName } from './scopes.ts';
import {
  authenticateClient,
  clientCredentials,
  lookupAccessToken,
  revokeToken,
  tokenEndpoint,
  type TokenRequest,
} from './tokens.ts';

const tags = ['sign-in'];
const appTags = ['developer apps'];

const appDoc = (a: DeveloperApp) => ({ ...a, createdAt: String(a.createdAt), updatedAt: String(a.updatedAt) });

/** RFC 6749 §5.1: token responses (and errors) must not be cached. Runs for error replies too. */
function noStore(
  _req: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: (err: null, payload: unknown) => void,
) {
  reply.header('cache-control', 'no-store');
  reply.header('pragma', 'no-cache');
  done(null, payload);
}

/** Turns schema failures and repeated form parameters into RFC 6749 invalid_request errors. */
function oauthBody<T>(request: FastifyRequest): T {
  const body = request.body;
  if (body && typeof body === 'object') {
    const repeated = Object.entries(body).find(([, v]) => Array.isArray(v));
    if (repeated) throw oauthError('invalid_request', `Parameter ${repeated[0]} must not be provided more than once.`);
  }
  // no body at all is a request with every parameter omitted (the schema's "body must be object" would not say which)
  if (request.validationError && body !== undefined)
    throw oauthError('invalid_request', request.validationError.message);
  // RFC 6749 §3.1: "Parameters sent without a value MUST be treated as if they were omitted"
  const params = (body ?? {}) as Record<string, unknown>;
  for (const key in params)
    if (params[key] === '') return Object.fromEntries(Object.entries(params).filter(([, v]) => v !== '')) as T;
  return params as T;
}

function tokenRequest(raw: Record<string, unknown>): TokenRequest {
  const { options, ...rest } = raw as TokenRequest & { options?: unknown };
  if (typeof options !== 'string') return raw as TokenRequest;
  let parsed: unknown;
  try {
    parsed = JSON.parse(options);
  } catch {
    throw oauthError('invalid_request', 'options must be a JSON object.');
  }
  const ok =
    parsed !== null &&
    typeof parsed === 'object' &&
    !Array.isArray(parsed) &&
    Object.keys(parsed).every((k) => k === 'issuedAtTimeWindowMs') &&
    ((parsed as { issuedAtTimeWindowMs?: unknown }).issuedAtTimeWindowMs === undefined ||
      Number.isSafeInteger((parsed as { issuedAtTimeWindowMs?: unknown }).issuedAtTimeWindowMs));
  if (!ok)
    throw oauthError('invalid_request', 'options must be a JSON object with an optional integer issuedAtTimeWindowMs.');
  return { ...rest, options: parsed as TokenRequest['options'] };
}

export function installSessionResolver(ctx: AppContext): void {
  setSessionResolver(async (token) => (await lookupAccessToken(ctx, token))?.session ?? null, ctx);
}

export const signin: Routes = {
  async register(fastify, ctx) {
    installSessionResolver(ctx);
    // the id_token key exists, and is imported, before the first request (the first process to
    // start creates it)
    await ensureSigningKey(ctx);
    await currentSigner(ctx, ctx.clock.now());
    registerMetadata(fastify, ctx);
    registerOpenIdRoutes(fastify, ctx);
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

    const limits = challengeLimits(ctx);
    app.post(
      '/api/v0/signin/challenge',
      {
        onRequest: limits.perIp,
        schema: {
          tags,
          summary: 'Start a sign-in: the message the wallet signs (limited per IP and per app: 429 with Retry-After)',
          body: ChallengeBody,
          response: { 200: ChallengeResponse, ...errorResponses(400, 429) },
        },
      },
      async (request) => {
        const c = await createChallenge(ctx, request.body, limits.perClient);
        return { ...c, expiresAt: String(c.expiresAt) };
      },
    );

    app.post(
      '/api/v0/signin/approve',
      {
        schema: {
          tags,
          summary: 'Submit the wallet signature; returns the one-time code',
          body: ApproveBody,
          response: { 200: ApproveResponse, ...errorResponses(400, 401, 404, 424) },
        },
      },
      async (request) => approveChallenge(ctx, request.body),
    );

    app.post(
      '/api/v0/signin/token',
      {
        config: { formBody: true }, // RFC 6749 §4.1.3 / RFC 7009 §2.1: clients post forms here
        attachValidation: true,
        onSend: noStore,
        schema: {
          tags,
          summary:
            'Exchange an authorization code or a refresh token (JSON or form-urlencoded; client auth in the body or HTTP Basic)',
          body: TokenBody,
          response: { 200: TokenResponse, 400: OAuthErrorResponse, 401: OAuthErrorResponse },
        },
      },
      async (request) => tokenEndpoint(ctx, tokenRequest(oauthBody(request)), request.headers.authorization),
    );

    app.post(
      '/api/v0/signin/token/revoke',
      {
        config: { formBody: true }, // RFC 6749 §4.1.3 / RFC 7009 §2.1: clients post forms here
        attachValidation: true,
        onSend: noStore,
        schema: {
          tags,
          summary: 'Revoke the authorization an access or refresh token belongs to (200 for unknown tokens)',
          body: RevokeBody,
          response: { 200: Type.Object({}), 400: OAuthErrorResponse, 401: OAuthErrorResponse },
        },
      },
      async (request) => {
        const body = oauthBody<{ token?: string; client_id?: string; client_secret?: string }>(request);
        if (!body.token) throw oauthError('invalid_request', 'token is required.');
        const authenticates =
          body.client_id !== undefined ||
          body.client_secret !== undefined ||
          /^basic\b/i.test(request.headers.authorization ?? '');
        const client = authenticates
          ? await authenticateClient(ctx, clientCredentials(body, request.headers.authorization))
          : undefined;
        await revokeToken(ctx, body.token, client?.client_id);
        return {};
      },
    );

    app.post(
      '/api/v0/auth/status',
      {
        schema: {
          tags,
          summary: 'Whether the bearer token is a live session',
          description: 'Body: empty object, or none.',
          response: { 200: StatusResponse, ...errorResponses(400) },
        },
      },
      async (request) => {
        // The body is optional (SDKs send {}), so it is checked here rather than by a body schema.
        const body = request.body;
        if (
          body !== undefined &&
          body !== null &&
          (typeof body !== 'object' || Array.isArray(body) || Object.keys(body).length > 0)
        ) {
          const extra = typeof body === 'object' && !Array.isArray(body) ? Object.keys(body)[0] : undefined;
          throw badRequest(extra ? `body has unknown field "${extra}"` : 'body must be an empty object');
        }
        const token = bearerToken(request);
        const info = token ? await lookupAccessToken(ctx, token) : null;
        if (!info)
          return { signedIn: false, address: '', platformAddress: '', chain: '', scopes: [], message: '', email: '' };
        const s = info.session;
        return {
          signedIn: true,
          address: s.address,
          platformAddress: s.platformAddress,
          chain: s.chain,
          scopes: s.scopes.map((scopeId) => ({ scopeName: scopeName(scopeId), scopeId })),
          message: info.message,
          email: '',
          ...Object.fromEntries(
            (await listConnections(ctx.db, s.platformAddress)).map((c) => [
              c.provider,
              { id: c.id, username: c.username },
            ]),
          ),
        };
      },
    );

    // Developer apps, on the reference SDK's paths.
    app.post(
      '/api/v0/developerApps',
      {
        schema: {
          tags: appTags,
          summary: 'Create a developer app (the secret is returned once)',
          body: CreateAppBody,
          response: {
            200: Type.Object({ clientId: Type.String(), clientSecret: Type.String() }),
            ...errorResponses(400, 401, 403),
          },
        },
      },
      async (request) => {
        const session = await requireSession(request, 'manageDeveloperApps');
        const { app: created, clientSecret } = await createDeveloperApp(
          ctx.db,
          { ...request.body, createdBy: session.platformAddress },
          ctx.clock.now(),
        );
        return { clientId: created.clientId, clientSecret };
      },
    );

    app.put(
      '/api/v0/developerApps',
      {
        schema: {
          tags: appTags,
          summary: 'Update your developer app (name, description, image, redirect URIs, rotate the secret)',
          body: UpdateAppBody,
          response: {
            200: Type.Object({ developerApp: DeveloperAppDoc, clientSecret: Type.Optional(Type.String()) }),
            ...errorResponses(400, 401, 403, 404),
          },
        },
      },
      async (request) => {
        const session = await requireSession(request, 'manageDeveloperApps');
        const { clientId, ...patch } = request.body;
        const r = await updateDeveloperApp(ctx, clientId, session.platformAddress, patch, ctx.clock.now());
        return { developerApp: appDoc(r.app), ...(r.clientSecret ? { clientSecret: r.clientSecret } : {}) };
      },
    );

    app.delete(
      '/api/v0/developerApps',
      {
        schema: {
          tags: appTags,
          summary: 'Delete your developer app (revokes every authorization issued to it)',
          body: DeleteAppBody,
          response: { 200: Type.Object({}), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (request) => {
        const session = await requireSession(request, 'manageDeveloperApps');
        await deleteDeveloperApp(ctx, request.body.clientId, session.platformAddress, ctx.clock.now());
        return {};
      },
    );

    app.post(
      '/api/v0/developerApps/fetch',
      {
        schema: {
          tags: appTags,
          summary: 'One app by clientId (public fields), or your own apps, 25 per page',
          body: FetchAppsBody,
          response: {
            200: Type.Object({ developerApps: Type.Array(DeveloperAppDoc), pagination: Pagination }),
            ...errorResponses(400, 401, 403, 404),
          },
        },
      },
      async (request) => {
        const { clientId, bookmark } = request.body;
        if (clientId !== undefined) {
          const found = await getDeveloperApp(ctx.db, clientId);
          if (!found) throw notFound(`No developer app with clientId ${clientId}`);
          return { developerApps: [appDoc(found)], pagination: { bookmark: '', hasMore: false } };
        }
        const session = await requireSession(request, 'manageDeveloperApps');
        const page = await listDeveloperApps(ctx.db, ctx.keyring, session.platformAddress, bookmark);
        return { developerApps: page.docs.map(appDoc), pagination: { bookmark: page.bookmark, hasMore: page.hasMore } };
      },
    );

    app.get(
      '/api/v0/developerApp/:clientId',
      {
        schema: {
          tags: appTags,
          summary: 'A developer app by client ID (never its secret)',
          params: Type.Object({ clientId: Type.String({ maxLength: 128 }) }),
          response: { 200: Type.Object({ developerApp: DeveloperAppDoc }), ...errorResponses(404) },
        },
      },
      async (request) => {
        const found = await getDeveloperApp(ctx.db, request.params.clientId);
        if (!found) throw notFound(`No developer app with clientId ${request.params.clientId}`);
        return { developerApp: appDoc(found) };
      },
    );

    registerAuthorizePage(fastify, ctx);
  },
};
