// The web console's capability: the console session (sign in with a wallet proof, who am I, sign
// out), API keys owned by the signed-in user, the apps a user signed in to (revocable), an app's
// recent sign-ins for its owner, the core plugins' form descriptions, and the built pages.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Routes } from '../shared/capability.ts';
import { countActiveOwnedApiKeys, createApiKey, listOwnedApiKeys, revokeOwnedApiKey } from '../api-keys/storage.ts';
import { badRequest, forbidden, notFound } from '../shared/errors.ts';
import { Bookmark, errorResponses } from '../shared/schemas.ts';
import { requireSession } from '../shared/session.ts';
import { claimsCreatedBy } from '../claims/read.ts';
import { consumeRequest, verifyChallenge } from '../signin/flow.ts';
import { MAX_SIGNATURE_LENGTH, SIGNATURE_DESCRIPTION } from '../signin/schemas.ts';
import { parseList } from '../signin/storage.ts';
import { findAppRow } from '../signin/apps.ts';
import { liveAuthorizationsOf, revokeOwnAuthorization, signinsToApp } from '../signin/authorizations.ts';
import {
  CONSOLE_CLIENT_ID,
  createConsoleSession,
  endConsoleSession,
  csrfTokenFor,
  requireConsoleSession,
  setSessionCookie,
  mintVisitorCookie,
  VISITOR_TTL_MS,
  SESSION_TTL_MS,
} from './console-session.ts';
import { CORE_PLUGIN_DESCRIPTIONS, PluginDescription, SchemaField } from './core-plugins.ts';
import { registerPortalStatic } from './static.ts';
import { useConsoleLink } from './console-links.ts';

const tags = ['console'];
const MAX_KEYS_PER_USER = 100;

const ConsoleSessionInfo = Type.Object({
  signedIn: Type.Boolean(),
  address: Type.String(),
  platformAddress: Type.String(),
  chain: Type.String(),
  scopes: Type.Array(Type.String()),
  expiresAt: Type.String({ description: 'UNIX ms; "0" for a visitor' }),
  csrfToken: Type.String({ description: 'Send as x-csrf-token on every non-GET call; "" for a visitor' }),
  nativeChainId: Type.String({
    description: 'Chain id a Keplr-style wallet is asked to enable (SIGNIN_NATIVE_CHAIN_ID)',
  }),
});

const OwnedApiKeyDoc = Type.Object({
  id: Type.String(),
  label: Type.String(),
  createdAt: Type.String(),
  lastUsedAt: Type.Union([Type.String(), Type.Null()]),
  revokedAt: Type.Union([Type.String(), Type.Null()]),
});

const SignedInApp = Type.Object({
  authorizationId: Type.String(),
  clientId: Type.String(),
  appName: Type.String(),
  scopes: Type.Array(Type.String()),
  createdAt: Type.String(),
  expiresAt: Type.String(),
});

const AppSignin = Type.Object({
  address: Type.String(),
  platformAddress: Type.String(),
  chain: Type.String(),
  scopes: Type.Array(Type.String()),
  createdAt: Type.String(),
  status: Type.Union(
    [Type.Literal('pending'), Type.Literal('active'), Type.Literal('revoked'), Type.Literal('ended')],
    {
      description:
        'pending: approved, code not exchanged yet; active: tokens live; revoked; ended: expired or never exchanged',
    },
  ),
});

export const portal: Routes = {
  register(fastify, ctx) {
    /** The console session's answer (ConsoleSessionInfo) for a signed-in session. */
    const signedIn = (
      who: { address: string; platformAddress: string; chain: string; scopes: string[] },
      expiresAt: number,
      sessionId: string,
    ) => ({
      signedIn: true,
      address: who.address,
      platformAddress: who.platformAddress,
      chain: who.chain,
      scopes: who.scopes,
      expiresAt: String(expiresAt),
      csrfToken: csrfTokenFor(ctx, sessionId),
      nativeChainId: ctx.config.signinNativeChainId,
    });
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
    app.addSchema(SchemaField);
    app.addSchema(PluginDescription);

    // ---- console session ------------------------------------------------------------------
    app.post(
      '/api/v0/console/session',
      {
        schema: {
          tags,
          summary: 'Sign in to the console: turn an approved wallet proof into a session cookie',
          description:
            'First POST /api/v0/signin/challenge with client_id "console" (and every scope the console needs), have the wallet sign the message, then send the signature here. Sets an HttpOnly SameSite=Strict cookie; answers the session and its CSRF token. Same-origin only.',
          body: Type.Object(
            {
              requestId: Type.String({ maxLength: 64 }),
              signature: Type.String({ maxLength: MAX_SIGNATURE_LENGTH, description: SIGNATURE_DESCRIPTION }),
              publicKey: Type.Optional(Type.String({ maxLength: 128 })),
            },
            { additionalProperties: false },
          ),
          response: { 200: ConsoleSessionInfo, ...errorResponses(400, 401, 403, 404, 424) },
        },
      },
      async (request, reply) => {
        // same-origin only (its entry in src/shared/access.ts): login CSRF cannot sign a browser in
        const now = ctx.clock.now();
        const req = await verifyChallenge(ctx, request.body, now);
        // Only a challenge made for the console opens a console session: a proof given to another
        // app ("Sign in to My App") never does.
        if (req.client_id !== CONSOLE_CLIENT_ID || req.redirect_uri !== null)
          throw badRequest(
            `This sign-in request was made for another app; start the console sign-in with client_id "${CONSOLE_CLIENT_ID}".`,
          );
        const scopes = parseList(req.scopes);
        const created = await ctx.db.transaction().execute(async (tx) => {
          if (!(await consumeRequest(tx, req.request_id, now))) return null;
          return createConsoleSession(
            ctx,
            tx,
            { address: req.address, platformAddress: req.platform_address, chain: req.chain, scopes },
            now,
          );
        });
        if (!created) throw badRequest('This sign-in request was already used. Start a new sign-in.');
        setSessionCookie(ctx, reply, created.cookie, SESSION_TTL_MS);
        reply.header('cache-control', 'no-store');
        const who = { address: req.address, platformAddress: req.platform_address, chain: req.chain, scopes };
        return signedIn(who, created.expiresAt, created.sessionId);
      },
    );

    app.post(
      '/api/v0/console/link',
      {
        schema: {
          tags,
          summary: 'Sign in to the console with a one-time link from the operator (platform console-link)',
          description:
            'The console page sends the part of the link after #/link/. The link works once and until it expires; it opens the same session cookie as a wallet sign-in. Same-origin only.',
          body: Type.Object(
            { token: Type.String({ maxLength: 200, description: '<linkId>.<secret>, from the link' }) },
            { additionalProperties: false },
          ),
          response: { 200: ConsoleSessionInfo, ...errorResponses(400, 401, 403) },
        },
      },
      async (request, reply) => {
        const { who, created } = await useConsoleLink(ctx, request.body.token);
        setSessionCookie(ctx, reply, created.cookie, SESSION_TTL_MS);
        reply.header('cache-control', 'no-store');
        return signedIn(who, created.expiresAt, created.sessionId);
      },
    );

    app.get(
      '/api/v0/console/session',
      {
        schema: {
          tags,
          summary: 'The console session of this browser (and its CSRF token)',
          response: { 200: ConsoleSessionInfo, ...errorResponses(401, 403) },
        },
      },
      async (request, reply) => {
        reply.header('cache-control', 'no-store');
        const auth = request.browserAuth;
        const s = auth?.session;
        const nativeChainId = ctx.config.signinNativeChainId;
        if (!auth || !s)
          return {
            signedIn: false,
            address: '',
            platformAddress: '',
            chain: '',
            scopes: [],
            expiresAt: '0',
            csrfToken: '',
            nativeChainId,
          };
        return signedIn(s, s.expiresAt, auth.id);
      },
    );

    app.delete(
      '/api/v0/console/session',
      {
        schema: {
          tags,
          summary: 'Sign out of the console',
          response: { 200: Type.Object({}), ...errorResponses(401, 403) },
        },
      },
      async (request, reply) => {
        await endConsoleSession(ctx, requireConsoleSession(request).authorizationId);
        setSessionCookie(ctx, reply, mintVisitorCookie(ctx), VISITOR_TTL_MS);
        return {};
      },
    );

    // ---- API keys owned by the console user ---------------------------------------------------
    app.get(
      '/api/v0/apiKeys',
      {
        schema: {
          tags,
          summary: 'Your API keys (never their values), newest first',
          response: { 200: Type.Object({ apiKeys: Type.Array(OwnedApiKeyDoc) }), ...errorResponses(401, 403) },
        },
      },
      async (request) => ({ apiKeys: await listOwnedApiKeys(ctx.db, requireConsoleSession(request).platformAddress) }),
    );

    app.post(
      '/api/v0/apiKeys',
      {
        schema: {
          tags,
          summary: 'Create an API key (the key is returned once)',
          body: Type.Object({ label: Type.String({ minLength: 1, maxLength: 128 }) }, { additionalProperties: false }),
          response: {
            200: Type.Object({ apiKey: OwnedApiKeyDoc, key: Type.String() }),
            ...errorResponses(400, 401, 403),
          },
        },
      },
      async (request) => {
        const owner = requireConsoleSession(request).platformAddress;
        if ((await countActiveOwnedApiKeys(ctx.db, owner)) >= MAX_KEYS_PER_USER)
          throw badRequest(`You already have ${MAX_KEYS_PER_USER} active API keys; revoke one first.`);
        const created = await createApiKey(ctx.db, request.body.label, ctx.clock.now(), owner);
        return {
          apiKey: {
            id: created.id,
            label: created.label,
            createdAt: String(created.createdAt),
            lastUsedAt: null,
            revokedAt: null,
          },
          key: created.key,
        };
      },
    );

    app.delete(
      '/api/v0/apiKeys',
      {
        schema: {
          tags,
          summary: 'Revoke one of your API keys (every process refuses it within API_KEY_CACHE_MS)',
          body: Type.Object({ id: Type.String({ maxLength: 64 }) }, { additionalProperties: false }),
          response: { 200: Type.Object({}), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (request) => {
        const owner = requireConsoleSession(request).platformAddress;
        if (!(await revokeOwnedApiKey(ctx.db, request.body.id, owner, ctx.clock.now())))
          throw notFound(`You have no API key with id ${request.body.id}`);
        return {};
      },
    );

    // ---- the apps a user signed in to -------------------------------------------------------
    app.get(
      '/api/v0/account/authorizations',
      {
        schema: {
          tags,
          summary: 'Apps you are signed in to (live authorizations), newest first, at most 100',
          response: { 200: Type.Object({ authorizations: Type.Array(SignedInApp) }), ...errorResponses(401, 403) },
        },
      },
      async (request) => {
        const me = requireConsoleSession(request).platformAddress;
        return { authorizations: await liveAuthorizationsOf(ctx, me) };
      },
    );

    app.delete(
      '/api/v0/account/authorizations',
      {
        schema: {
          tags,
          summary: "Sign out of an app: revokes the authorization's access and refresh tokens",
          body: Type.Object({ authorizationId: Type.String({ maxLength: 64 }) }, { additionalProperties: false }),
          response: { 200: Type.Object({}), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (request) => {
        const me = requireConsoleSession(request).platformAddress;
        if (!(await revokeOwnAuthorization(ctx, me, request.body.authorizationId)))
          throw notFound(`You have no sign-in with authorizationId ${request.body.authorizationId}`);
        return {};
      },
    );

    // ---- an app's recent sign-ins, for its owner --------------------------------------------
    app.get(
      '/api/v0/developerApps/:clientId/signins',
      {
        schema: {
          tags: ['developer apps'],
          summary: "Your app's sign-ins, newest first, 25 per page",
          params: Type.Object({ clientId: Type.String({ maxLength: 128 }) }),
          querystring: Type.Object({ bookmark: Type.Optional(Bookmark) }, { additionalProperties: false }),
          response: {
            200: Type.Object({
              signins: Type.Array(AppSignin),
              pagination: Type.Object({ bookmark: Type.String(), hasMore: Type.Boolean() }),
            }),
            ...errorResponses(400, 401, 403, 404),
          },
        },
      },
      async (request) => {
        const session = await requireSession(request, 'manageDeveloperApps');
        const { clientId } = request.params;
        const appRow = await findAppRow(ctx.db, clientId);
        if (!appRow) throw notFound(`No developer app with clientId ${clientId}`);
        if (appRow.created_by !== session.platformAddress)
          throw forbidden('Only the owner of the app may list its sign-ins.');
        const page = await signinsToApp(ctx, clientId, request.query.bookmark);
        return { signins: page.docs, pagination: { bookmark: page.bookmark, hasMore: page.hasMore } };
      },
    );

    // ---- my claims ---------------------------------------------------------------------------
    app.get(
      '/api/v0/claims/mine',
      {
        schema: {
          tags: ['claims'],
          summary:
            'Claims you created (live ones), newest first, 25 per page; read each with GET /api/v0/claim/{claimId}',
          querystring: Type.Object({ bookmark: Type.Optional(Bookmark) }, { additionalProperties: false }),
          response: {
            200: Type.Object({
              claims: Type.Array(
                Type.Object({
                  claimId: Type.String(),
                  name: Type.String(),
                  createdAt: Type.String(),
                  lastUpdated: Type.String(),
                  version: Type.String(),
                  testOnly: Type.Boolean(),
                }),
              ),
              pagination: Type.Object({ bookmark: Type.String(), hasMore: Type.Boolean() }),
            }),
            ...errorResponses(400, 401),
          },
        },
      },
      async (request) => {
        const me = (await requireSession(request)).platformAddress;
        const page = await claimsCreatedBy(ctx, me, request.query.bookmark);
        return { claims: page.docs, pagination: { bookmark: page.bookmark, hasMore: page.hasMore } };
      },
    );

    // ---- plugin descriptions ----------------------------------------------------------------
    app.get(
      '/api/v0/plugins/core',
      {
        schema: {
          tags: ['plugins'],
          summary:
            'Form descriptions of the core plugins (the fields a claim form asks for each one); GET /api/v0/plugin/{id} never returns core ids',
          response: { 200: Type.Object({ plugins: Type.Array(Type.Ref('PluginDescription')) }) },
        },
      },
      async () => ({ plugins: CORE_PLUGIN_DESCRIPTIONS }),
    );

    registerPortalStatic(fastify, ctx);
  },
};
