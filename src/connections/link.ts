// The wallet proof of the connections flow (issue 29). `start` only records which wallet asks; a
// provider account is linked to a wallet only through a browser that proves control of that wallet,
// at the service's own link page:
//  - a console (or claim-page) session of that wallet in this browser, or
//  - the wallet's signature of a text naming the wallet, the provider and this service: EIP-4361
//    signed with EIP-191 for an 0x address, ADR-36 for a native one, checked by the sign-in
//    capability's code (verifyWalletSignature).
// The proof gives that browser an HttpOnly binding cookie (random; only its SHA-256 is stored) and
// only then creates the `state` sent to the provider. The callback completes only in a browser
// presenting that cookie, so a URL handed to someone else's browser links nothing.
import * as oauth from 'oauth4webapi';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import { randomHex, sha256Hex } from '../shared/crypto.ts';
import { badRequest, notFound } from '../shared/errors.ts';
import type { Session } from '../shared/session.ts';
import { readCookie } from '../portal/console-session.ts';
import { requestMessage } from '../signin/message.ts';
import type { ConfiguredProvider } from './config.ts';
import { authorizationUrl } from './oauth.ts';
import { PROVIDER_NAMES, type ProviderId } from './providers.ts';
import { findRequest, insertRequest, markProven, type ConnectionRequestTable } from './storage.ts';

/** How long the user has to prove the wallet and finish at the provider. */
export const CONNECTION_REQUEST_TTL_MS = 10 * 60_000;

const REQUEST_ID = /^[0-9a-f]{32}$/;

export const linkPagePath = (provider: ProviderId) => `/connections/${provider}/link`;
export const callbackUrl = (ctx: AppContext, provider: ProviderId) =>
  `${ctx.config.publicUrl}/api/v0/connections/${provider}/callback`;

/** Records a request for the session's wallet; answers the link page's URL, where a browser must prove that wallet. */
export async function createLinkRequest(
  ctx: AppContext,
  provider: ProviderId,
  who: Pick<Session, 'platformAddress' | 'address' | 'chain'>,
): Promise<string> {
  const requestId = randomHex(16);
  const now = ctx.clock.now();
  await insertRequest(ctx.db, {
    request_id: requestId,
    provider,
    platform_address: who.platformAddress,
    address: who.address,
    chain: who.chain,
    nonce: randomHex(16),
    issued_at: now,
    expires_at: now + CONNECTION_REQUEST_TTL_MS,
    proven_at: null,
    state_hash: null,
    binding_hash: null,
    code_verifier_enc: null,
  });
  return `${ctx.config.publicUrl}${linkPagePath(provider)}?request=${requestId}`;
}

/** The pending request the link page names, not yet proven and not expired; the refusal otherwise. */
export async function openLinkRequest(
  ctx: AppContext,
  provider: ProviderId,
  requestId: string,
): Promise<ConnectionRequestTable> {
  const row = REQUEST_ID.test(requestId) ? await findRequest(ctx.db, requestId) : null;
  if (!row) throw notFound('Unknown link request. Start again.');
  if (row.provider !== provider) throw badRequest(`This link request is for ${row.provider}, not ${provider}.`);
  if (row.proven_at !== null) throw badRequest('This link request was already used in a browser. Start again.');
  if (ctx.clock.now() >= row.expires_at)
    throw badRequest('This link request has expired (a link must be finished within 10 minutes). Start again.');
  return row;
}

export const linkStatement = (provider: ProviderId, domain: string) =>
  `Link your ${PROVIDER_NAMES[provider]} account to this wallet on ${domain}. Sign only if you started this link yourself.`;

/** The EIP-4361 text the wallet signs: this service, the wallet, the provider, and the request. */
export function linkMessage(ctx: AppContext, row: ConnectionRequestTable): string {
  const provider = row.provider as ProviderId;
  return requestMessage(ctx.config.publicUrl, linkPagePath(provider), (domain) => linkStatement(provider, domain), row);
}

/**
 * The wallet was proven by this browser: binds the request to a new cookie, creates the state and
 * PKCE verifier, and answers where to send the browser (the provider's authorization URL).
 */
export async function proveLinkRequest(
  ctx: AppContext,
  p: ConfiguredProvider,
  row: ConnectionRequestTable,
): Promise<{ binding: string; maxAgeMs: number; url: string }> {
  const state = randomHex(32);
  const binding = randomHex(32);
  const verifier = p.pkce ? oauth.generateRandomCodeVerifier() : null;
  const now = ctx.clock.now();
  const proof = {
    state_hash: sha256Hex(state),
    binding_hash: sha256Hex(binding),
    code_verifier_enc: verifier ? ctx.keyring.encrypt(verifier) : null,
  };
  if (!(await markProven(ctx.db, row.request_id, proof, now)))
    throw badRequest('This link request was already used in a browser, or has expired. Start again.');
  return {
    binding,
    maxAgeMs: row.expires_at - now,
    url: await authorizationUrl(p, callbackUrl(ctx, p.id), state, verifier),
  };
}

// ---- the binding cookie ---------------------------------------------------------------------
// One per provider. SameSite=Lax: the provider's redirect to the callback is a cross-site top-level
// GET, which carries Lax cookies and not Strict ones. On https the __Host- prefix keeps another
// subdomain from planting its own (an attacker's) binding cookie in the victim's browser.

const isHttps = (ctx: AppContext) => new URL(ctx.config.publicUrl).protocol === 'https:';

export const bindingCookieName = (ctx: AppContext, provider: ProviderId) =>
  `${isHttps(ctx) ? '__Host-' : ''}platform_link_${provider}`;

export function bindingCookie(ctx: AppContext, provider: ProviderId, value: string, maxAgeMs: number): string {
  return `${bindingCookieName(ctx, provider)}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${Math.max(0, Math.floor(maxAgeMs / 1000))}${isHttps(ctx) ? '; Secure' : ''}`;
}

/** SHA-256 of the request's binding cookie for this provider, or null when it has none. */
export function presentedBinding(ctx: AppContext, request: FastifyRequest, provider: ProviderId): string | null {
  const value = readCookie(request, bindingCookieName(ctx, provider));
  return value ? sha256Hex(value) : null;
}
