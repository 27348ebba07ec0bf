// Social connections: a signed-in wallet links its account at a provider (OAuth 2.0 code flow with
// PKCE where the provider has it), lists its links and removes them. The callback is the browser's
// return from the provider, so it needs no API key; it always ends in a redirect to the configured
// page, with `?connected=<provider>` or `?connectionError=<text>`.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import * as oauth from 'oauth4webapi';
import { Type } from 'typebox';
import type { Capability } from '../capabilities.ts';
import type { AppContext } from '../context.ts';
import { randomHex, sha256Hex } from '../shared/crypto.ts';
import { notFound } from '../shared/errors.ts';
import { errorResponses } from '../shared/schemas.ts';
import { requireSession } from '../shared/session.ts';
import type { ConfiguredProvider } from './config.ts';
import { authorizationUrl, ConnectionError, exchangeCode, fetchIdentity } from './oauth.ts';
import { PROVIDER_IDS, type ProviderId } from './providers.ts';
import { deleteConnection, insertRequest, listConnections, saveConnection, takeRequest } from './storage.ts';

/** How long the user has to finish at the provider. */
export const CONNECTION_REQUEST_TTL_MS = 10 * 60_000;

const tags = ['connections'];
const ProviderParams = Type.Object({ provider: Type.String({ maxLength: 32 }) });
const Connection = Type.Object({ provider: Type.String(), id: Type.String(), username: Type.String(), linkedAt: Type.String() });

function configured(ctx: AppContext, provider: string): ConfiguredProvider {
  if (!(PROVIDER_IDS as readonly string[]).includes(provider)) throw notFound(`Unknown provider "${provider}" (known: ${PROVIDER_IDS.join(', ')})`);
  const p = ctx.config.connections.providers[provider as ProviderId];
  if (!p) throw notFound(`Connections to ${provider} are not enabled on this service`);
  return p;
}

const callbackUrl = (ctx: AppContext, provider: ProviderId) => `${ctx.config.publicUrl}/api/v0/connections/${provider}/callback`;

function returnTo(ctx: AppContext, outcome: { connected: ProviderId } | { connectionError: string }): string {
  const u = new URL(ctx.config.connections.returnUrl);
  for (const [k, v] of Object.entries(outcome)) u.searchParams.set(k, v);
  return u.toString();
}

export const connections: Capability = {
  name: 'connections',
  register(fastify, ctx) {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

    app.post(
      '/api/v0/connections/:provider/start',
      {
        schema: {
          tags,
          summary: "Start linking the signed-in wallet to a provider account: answers the provider's authorization URL",
          params: ProviderParams,
          response: { 200: Type.Object({ url: Type.String() }), ...errorResponses(400, 401, 404) },
        },
      },
      async (request) => {
        const session = await requireSession(request);
        const p = configured(ctx, request.params.provider);
        const state = randomHex(32);
        const verifier = p.pkce ? oauth.generateRandomCodeVerifier() : null;
        await insertRequest(ctx.db, {
          state_hash: sha256Hex(state),
          provider: p.id,
          platform_address: session.platformAddress,
          code_verifier_enc: verifier ? ctx.keyring.encrypt(verifier) : null,
          expires_at: ctx.clock.now() + CONNECTION_REQUEST_TTL_MS,
        });
        return { url: await authorizationUrl(p, callbackUrl(ctx, p.id), state, verifier) };
      },
    );

    app.get(
      '/api/v0/connections/:provider/callback',
      {
        schema: {
          tags,
          summary: 'Where the provider returns the browser; links the account and redirects to the configured page',
          params: ProviderParams,
          querystring: Type.Object({}, { additionalProperties: Type.String({ maxLength: 4096 }) }),
          response: { 302: Type.Null(), ...errorResponses(404) },
        },
      },
      async (request, reply) => {
        const p = configured(ctx, request.params.provider);
        const query = new URLSearchParams(request.query as Record<string, string>);
        const state = query.get('state') ?? '';
        const pending = state ? await takeRequest(ctx.db, sha256Hex(state)) : null;
        if (!pending || pending.provider !== p.id || pending.expires_at < ctx.clock.now()) {
          return reply.redirect(returnTo(ctx, { connectionError: 'This link request is unknown, used or expired. Start again.' }), 302);
        }
        try {
          const verifier = pending.code_verifier_enc ? ctx.keyring.decrypt(pending.code_verifier_enc) : null;
          const accessToken = await exchangeCode(p, callbackUrl(ctx, p.id), query, state, verifier, ctx.config.connections.timeoutMs);
          const identity = await fetchIdentity(p, accessToken, ctx.config.connections.timeoutMs);
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
          response: { 200: Type.Object({ connections: Type.Array(Connection), availableProviders: Type.Array(Type.String()) }), ...errorResponses(401) },
        },
      },
      async (request) => {
        const session = await requireSession(request);
        const links = await listConnections(ctx.db, session.platformAddress);
        return {
          connections: links.map((l) => ({ provider: l.provider, id: l.id, username: l.username, linkedAt: String(l.linkedAt) })),
          availableProviders: PROVIDER_IDS.filter((id) => ctx.config.connections.providers[id]),
        };
      },
    );

    app.delete(
      '/api/v0/connections/:provider',
      {
        schema: {
          tags,
          summary: 'Unlink the signed-in wallet from its account at a provider',
          params: ProviderParams,
          response: { 200: Type.Object({}), ...errorResponses(401, 404) },
        },
      },
      async (request) => {
        const session = await requireSession(request);
        const provider = request.params.provider;
        if (!(PROVIDER_IDS as readonly string[]).includes(provider)) throw notFound(`Unknown provider "${provider}" (known: ${PROVIDER_IDS.join(', ')})`);
        if (!(await deleteConnection(ctx.db, session.platformAddress, provider as ProviderId))) throw notFound(`No ${provider} account is linked to this address`);
        return {};
      },
    );
  },
};
