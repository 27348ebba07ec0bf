// Social connections: a wallet links its account at a provider (OAuth 2.0 code flow with PKCE where
// the provider has it), lists its links and removes them. Linking takes three steps (link.ts):
//   1. `start` (a console session, or a token holding manageConnections) records the request and
//      answers the service's own link page;
//   2. the link page, in the user's browser, proves the wallet (that wallet's console session in
//      this browser, or its signature), sets the binding cookie and sends the browser to the provider;
//   3. the callback, the browser's return from the provider, links the account only for the browser
//      holding the binding cookie. It needs no API key and always ends in a redirect to the
//      configured page, with `?connected=<provider>` or `?connectionError=<text>`.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Routes } from '../shared/capability.ts';
import type { AppContext } from '../context.ts';
import { sha256Hex } from '../shared/crypto.ts';
import { ApiError, forbidden, notFound } from '../shared/errors.ts';
import { errorResponses } from '../shared/schemas.ts';
import { requireSession, type Session } from '../shared/session.ts';
import { cookieName, findConsoleSession, readCookie } from '../portal/console-session.ts';
import { verifyWalletSignature } from '../signin/flow.ts';
import { pageHeaders } from '../signin/page.ts';
import type { ConfiguredProvider } from './config.ts';
import {
  bindingCookie,
  callbackUrl,
  createLinkRequest,
  linkMessage,
  openLinkRequest,
  presentedBinding,
  proveLinkRequest,
} from './link.ts';
import { egressFor } from '../egress/index.ts';
import { ConnectionError, exchangeCode, fetchIdentity } from './oauth.ts';
import { linkErrorPage, linkPage } from './page.ts';
import { PROVIDER_IDS, PROVIDER_NAMES, type ProviderId } from './providers.ts';
import { deleteConnection, listConnections, saveConnection, takeRequest } from './storage.ts';

export { CONNECTION_REQUEST_TTL_MS } from './link.ts';

/** The scope a token needs to start or delete links (console sessions need none). */
export const CONNECTIONS_SCOPE = 'manageConnections';

const tags = ['connections'];
const ProviderParams = Type.Object({ provider: Type.String({ maxLength: 32 }) });
const Connection = Type.Object({
  provider: Type.String(),
  id: Type.String(),
  username: Type.String(),
  linkedAt: Type.String(),
});

function configured(ctx: AppContext, provider: string): ConfiguredProvider {
  if (!(PROVIDER_IDS as readonly string[]).includes(provider))
    throw notFound(`Unknown provider "${provider}" (known: ${PROVIDER_IDS.join(', ')})`);
  const p = ctx.config.connections.providers[provider as ProviderId];
  if (!p) throw notFound(`Connections to ${provider} are not enabled on this service`);
  return p;
}

function returnTo(ctx: AppContext, outcome: { connected: ProviderId } | { connectionError: string }): string {
  const u = new URL(ctx.config.connections.returnUrl);
  for (const [k, v] of Object.entries(outcome)) u.searchParams.set(k, v);
  return u.toString();
}

/** Starting and deleting links: always for a console session; a token needs manageConnections. */
async function requireLinkManager(request: FastifyRequest): Promise<Session> {
  const consoleSession = request.browserAuth?.session;
  return consoleSession ?? requireSession(request, CONNECTIONS_SCOPE);
}

/** Only the link page posts the proof: another site must not drive a browser through it (and its cookie). */
function assertFromLinkPage(ctx: AppContext, request: FastifyRequest): void {
  const own = new URL(ctx.config.publicUrl).origin;
  const { origin } = request.headers;
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin')
    throw forbidden(
      `Cross-site request refused: the wallet proof is only accepted from the link page at ${own} (Sec-Fetch-Site: ${String(site)}).`,
    );
  if (origin !== undefined && origin !== own)
    throw forbidden(`Cross-site request refused: Origin ${String(origin)} is not ${own}.`);
  if (origin === undefined && site === undefined)
    throw forbidden('The wallet proof must come from the link page (Origin or Sec-Fetch-Site header missing).');
}

const CALLBACK_REFUSED = {
  unknown: 'This link request is unknown, used or expired. Start again.',
  'missing-binding':
    'This link was started in another browser: this one holds no binding cookie for it. Start again in this browser.',
  'binding-mismatch':
    "This link was started in another browser: this browser's binding cookie is for another link. Start again in this browser.",
} as const;

export const connections: Routes = {
  register(fastify, ctx) {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

    app.post(
      '/api/v0/connections/:provider/start',
      {
        // A backend may send no body at all (as before); any body is checked by the schema, so an
        // unknown field (a `returnUrl` this route never honoured) is a 400 naming it.
        preValidation: (request, _reply, done) => {
          if (request.body === undefined) request.body = {};
          done();
        },
        schema: {
          tags,
          summary:
            "Start linking the signed-in wallet to a provider account: answers the URL of the service's link page",
          description:
            "Send the user's browser to `url`: the service's own page, where the browser proves the wallet (its console session of that wallet, or the wallet's signature of a text naming the wallet and the provider) and is then sent on to the provider. Needs a console session, or a token holding manageConnections. The body is empty (or `{}`).",
          params: ProviderParams,
          body: Type.Object({}, { additionalProperties: false }),
          response: { 200: Type.Object({ url: Type.String() }), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (request) => {
        const session = await requireLinkManager(request);
        const p = configured(ctx, request.params.provider);
        return { url: await createLinkRequest(ctx, p.id, session) };
      },
    );

    app.get(
      '/connections/:provider/link',
      {
        // the page answers a missing or malformed request id itself, as an error page
        attachValidation: true,
        schema: {
          tags,
          summary:
            "The link page (HTML) that `start` answers: it names the wallet and the provider, proves the wallet in the user's browser, and sends it on to the provider",
          params: ProviderParams,
          querystring: Type.Object({ request: Type.String({ maxLength: 64 }) }),
        },
      },
      async (request, reply) => {
        const nonce = pageHeaders(reply);
        const { provider } = request.params as { provider: string };
        const requestId = (request.query as { request?: unknown }).request;
        let p: ConfiguredProvider;
        let row: Awaited<ReturnType<typeof openLinkRequest>>;
        try {
          p = configured(ctx, provider);
          row = await openLinkRequest(ctx, p.id, typeof requestId === 'string' ? requestId : '');
        } catch (err) {
          if (!(err instanceof ApiError)) throw err;
          return reply.code(err.statusCode).send(linkErrorPage(err.message, nonce));
        }
        // This browser's console (or claim-page) session of the same wallet is the proof: on at once.
        const value = readCookie(request, cookieName(ctx));
        const session = value === null ? null : ((await findConsoleSession(ctx, value))?.session ?? null);
        if (session && session.platformAddress === row.platform_address) {
          try {
            const proven = await proveLinkRequest(ctx, p, row);
            return reply
              .header('set-cookie', bindingCookie(ctx, p.id, proven.binding, proven.maxAgeMs))
              .redirect(proven.url, 302);
          } catch (err) {
            if (!(err instanceof ApiError)) throw err;
            return reply.code(err.statusCode).send(linkErrorPage(err.message, nonce));
          }
        }
        return reply.send(
          linkPage({
            row,
            message: linkMessage(ctx, row),
            nativeChainId: ctx.config.signinNativeChainId,
            cancelUrl: returnTo(ctx, {
              connectionError: `You cancelled linking your ${PROVIDER_NAMES[p.id]} account.`,
            }),
            otherSession: session ? session.address : null,
            nonce,
          }),
        );
      },
    );

    app.post(
      '/api/v0/connections/:provider/link',
      {
        schema: {
          tags,
          summary:
            "The link page's wallet proof: the wallet's signature of the link text; sets the binding cookie and answers the provider's authorization URL",
          description:
            'Called by the link page only (same origin). EIP-191 signature for an 0x address; ADR-36 signature and its publicKey for a native one. Sets an HttpOnly SameSite=Lax binding cookie: the callback completes only in this browser.',
          params: ProviderParams,
          body: Type.Object(
            {
              request: Type.String({ maxLength: 64 }),
              signature: Type.String({ maxLength: 16_384 }),
              publicKey: Type.Optional(Type.String({ maxLength: 128 })),
            },
            { additionalProperties: false },
          ),
          response: { 200: Type.Object({ url: Type.String() }), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (request, reply) => {
        assertFromLinkPage(ctx, request);
        const p = configured(ctx, request.params.provider);
        const row = await openLinkRequest(ctx, p.id, request.body.request);
        await verifyWalletSignature(
          ctx,
          { address: row.address, chain: row.chain, message: linkMessage(ctx, row), validUntil: row.expires_at },
          request.body,
          'link',
        );
        const proven = await proveLinkRequest(ctx, p, row);
        reply
          .header('set-cookie', bindingCookie(ctx, p.id, proven.binding, proven.maxAgeMs))
          .header('cache-control', 'no-store');
        return { url: proven.url };
      },
    );

    app.get(
      '/api/v0/connections/:provider/callback',
      {
        schema: {
          tags,
          summary:
            'Where the provider returns the browser; links the account (only in the browser that proved the wallet) and redirects to the configured page',
          params: ProviderParams,
          querystring: Type.Object({}, { additionalProperties: Type.String({ maxLength: 4096 }) }),
          response: { 302: Type.Null(), ...errorResponses(404) },
        },
      },
      async (request, reply) => {
        const p = configured(ctx, request.params.provider);
        const query = new URLSearchParams(request.query as Record<string, string>);
        const state = query.get('state') ?? '';
        const taken = state
          ? await takeRequest(ctx.db, sha256Hex(state), p.id, ctx.clock.now(), presentedBinding(ctx, request, p.id))
          : ({ outcome: 'unknown' } as const);
        if (taken.outcome !== 'taken') {
          if (taken.outcome !== 'unknown')
            request.log.warn(
              { provider: p.id, reason: taken.outcome },
              'connection callback refused: not the browser that proved the wallet',
            );
          return reply.redirect(returnTo(ctx, { connectionError: CALLBACK_REFUSED[taken.outcome] }), 302);
        }
        // the request is used up: this browser's binding cookie is no longer needed
        reply.header('set-cookie', bindingCookie(ctx, p.id, '', 0));
        const pending = taken.row;
        try {
          const verifier = pending.code_verifier_enc ? ctx.keyring.decrypt(pending.code_verifier_enc) : null;
          const accessToken = await exchangeCode(
            egressFor(ctx),
            p,
            callbackUrl(ctx, p.id),
            query,
            state,
            verifier,
            ctx.config.connections.timeoutMs,
          );
          const identity = await fetchIdentity(egressFor(ctx), p, accessToken, ctx.config.connections.timeoutMs);
          await saveConnection(ctx.db, pending.platform_address, p.id, identity, ctx.clock.now());
          return reply.redirect(returnTo(ctx, { connected: p.id }), 302);
        } catch (err) {
          if (!(err instanceof ConnectionError)) throw err;
          request.log.warn({ provider: p.id, reason: err.message }, 'connection failed');
          return reply.redirect(returnTo(ctx, { connectionError: err.message }), 302);
        }
      },
    );

    app.get(
      '/api/v0/connections',
      {
        schema: {
          tags,
          summary: "The signed-in wallet's linked accounts, and the providers this service offers",
          response: {
            200: Type.Object({ connections: Type.Array(Connection), availableProviders: Type.Array(Type.String()) }),
            ...errorResponses(401),
          },
        },
      },
      async (request) => {
        const session = await requireSession(request);
        const links = await listConnections(ctx.db, session.platformAddress);
        return {
          connections: links.map((l) => ({
            provider: l.provider,
            id: l.id,
            username: l.username,
            linkedAt: String(l.linkedAt),
          })),
          availableProviders: PROVIDER_IDS.filter((id) => ctx.config.connections.providers[id]),
        };
      },
    );

    app.delete(
      '/api/v0/connections/:provider',
      {
        schema: {
          tags,
          summary:
            'Unlink the signed-in wallet from its account at a provider (a console session, or a token holding manageConnections)',
          params: ProviderParams,
          response: { 200: Type.Object({}), ...errorResponses(401, 404) },
        },
      },
      async (request) => {
        const session = await requireLinkManager(request);
        const provider = request.params.provider;
        if (!(PROVIDER_IDS as readonly string[]).includes(provider))
          throw notFound(`Unknown provider "${provider}" (known: ${PROVIDER_IDS.join(', ')})`);
        if (!(await deleteConnection(ctx.db, session.platformAddress, provider as ProviderId)))
          throw notFound(`No ${provider} account is linked to this address`);
        return {};
      },
    );
  },
};
