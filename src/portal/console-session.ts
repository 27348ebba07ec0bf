// Browser sessions of the web console. The browser holds one HttpOnly cookie and never an API key
// or a refresh token. The cookie is one of:
//   s.<sessionId>.<verifier>   a signed-in session, created after a wallet proof (console_sessions
//                              keeps SHA-256(verifier); the id is a primary-key selector);
//   v.<expiresAt>.<nonce>.<mac> a visitor (no user), minted when a page of the portal is served, so a
//                              public claim page can read claims before its user connects a wallet.
// The API-key gate accepts either in place of `x-api-key` (gate.ts calls authenticateBrowser):
//   - the request must come from the portal's own origin (Sec-Fetch-Site, when sent, is
//     `same-origin`; Origin, when sent, is PUBLIC_URL's origin);
//   - a visitor may only read (GET/HEAD);
//   - every other method needs `x-csrf-token`, an HMAC of the session id that only same-origin
//     script can learn (from the session routes' JSON), so a forged cross-site form or fetch fails.
// The cookie is SameSite=Strict: cross-site requests do not carry it at all; the token and the
// origin checks are the second and third lines of defence.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import type { Chain } from '../shared/addresses.ts';
import { randomHex, safeEqual, sha256Hex } from '../shared/crypto.ts';
import { forbidden, unauthorized } from '../shared/errors.ts';
import type { Session } from '../shared/session.ts';
import { CONSOLE_CLIENT_ID } from '../db/migrations/0014_console_sessions.ts';
import type { Tx } from '../db/index.ts';
import { newCredential } from './storage.ts';

export { CONSOLE_CLIENT_ID };

export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
export const VISITOR_TTL_MS = 24 * 60 * 60 * 1000;
export const CSRF_HEADER = 'x-csrf-token';

/** What the gate learned from the cookie. */
export interface BrowserAuth {
  kind: 'session' | 'visitor';
  /** Session id, or the visitor nonce (rate limiting and CSRF binding). */
  id: string;
  session: (Session & { expiresAt: number }) | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    browserAuth?: BrowserAuth;
  }
}

/** Signs a console session out (its cookie stops working at once). */
export async function endConsoleSession(ctx: Pick<AppContext, 'db' | 'clock'>, sessionId: string): Promise<void> {
  await ctx.db
    .updateTable('console_sessions')
    .set({ revoked_at: ctx.clock.now() })
    .where('session_id', '=', sessionId)
    .where('revoked_at', 'is', null)
    .execute();
}

export function cookieName(ctx: AppContext): string {
  // __Host- binds the cookie to this exact origin (no Domain, Path=/, Secure) where https allows it.
  return new URL(ctx.config.publicUrl).protocol === 'https:' ? '__Host-platform_console' : 'platform_console';
}

export function readCookie(request: FastifyRequest, name: string): string | null {
  const header = request.headers.cookie;
  if (typeof header !== 'string') return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

export function setSessionCookie(ctx: AppContext, reply: FastifyReply, value: string, maxAgeMs: number): void {
  const secure = new URL(ctx.config.publicUrl).protocol === 'https:' ? '; Secure' : '';
  reply.header(
    'set-cookie',
    `${cookieName(ctx)}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${Math.max(0, Math.floor(maxAgeMs / 1000))}${secure}`,
  );
}

export const csrfTokenFor = (ctx: AppContext, id: string): string => ctx.keyring.sign(`console-csrf|${id}`);

export function mintVisitorCookie(ctx: AppContext): string {
  const payload = `v.${ctx.clock.now() + VISITOR_TTL_MS}.${randomHex(12)}`;
  return `${payload}.${ctx.keyring.sign(`console-visitor|${payload}`)}`;
}

const SESSION_RE = /^s\.([0-9a-f]{32})\.([0-9a-f]{64})$/;
const VISITOR_RE = /^(v\.(\d{1,16})\.([0-9a-f]{24}))\.([A-Za-z0-9_-]{43})$/;

/** A live signed-in console session for the cookie value, or null. */
export async function findConsoleSession(ctx: AppContext, value: string): Promise<BrowserAuth | null> {
  const now = ctx.clock.now();
  const s = SESSION_RE.exec(value);
  if (s) {
    const row = await ctx.db
      .selectFrom('console_sessions')
      .selectAll()
      .where('session_id', '=', s[1])
      .executeTakeFirst();
    if (!row || !safeEqual(sha256Hex(s[2]), row.token_hash) || row.revoked_at !== null || now >= row.expires_at)
      return null;
    return {
      kind: 'session',
      id: row.session_id,
      session: {
        platformAddress: row.platform_address,
        address: row.address,
        chain: row.chain,
        scopes: JSON.parse(row.scopes) as string[],
        clientId: CONSOLE_CLIENT_ID,
        authorizationId: row.session_id,
        expiresAt: row.expires_at,
      },
    };
  }
  const v = VISITOR_RE.exec(value);
  if (v && ctx.keyring.verify(`console-visitor|${v[1]}`, v[4]) && now < Number(v[2]))
    return { kind: 'visitor', id: v[3], session: null };
  return null;
}

function portalOrigin(ctx: AppContext): string {
  return new URL(ctx.config.publicUrl).origin;
}

/** Refuses a cookie-carrying request that did not come from the portal's own pages. */
export function assertSameOrigin(ctx: AppContext, request: FastifyRequest): void {
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin')
    throw forbidden(
      `Cross-site request refused: the console session is only accepted from ${portalOrigin(ctx)} (Sec-Fetch-Site: ${String(site)}).`,
    );
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== portalOrigin(ctx))
    throw forbidden(`Cross-site request refused: Origin ${String(origin)} is not ${portalOrigin(ctx)}.`);
}

const SAFE_METHODS = new Set(['GET', 'HEAD']);

export const CONSOLE_ONLY =
  'Unauthorized request. This route is only available to a signed-in console session (sign in at the console).';

/**
 * Authenticates a request by its console cookie (called by the API-key gate when no `x-api-key`
 * was sent). Returns null when there is no console cookie at all (the gate then answers its own
 * 401), throws the refusal otherwise.
 */
export async function authenticateBrowser(ctx: AppContext, request: FastifyRequest): Promise<BrowserAuth | null> {
  const value = readCookie(request, cookieName(ctx));
  if (value === null) return null;
  const auth = await findConsoleSession(ctx, value);
  if (!auth)
    throw unauthorized('Unauthorized request. The console session has expired or was signed out; sign in again.');
  assertSameOrigin(ctx, request);
  // A visitor (no wallet yet) reads only what the public claim page shows (the routes whose entry
  // in src/shared/access.ts says `console: 'visitor'`); elsewhere the cookie is no stand-in for an API key.
  if (
    auth.kind === 'visitor' &&
    SAFE_METHODS.has(request.method) &&
    request.routeOptions.config?.access?.console !== 'visitor'
  ) {
    throw unauthorized(
      'Unauthorized request. Send your x-api-key, or sign in to the console: a visitor may only read claim pages.',
    );
  }
  if (!SAFE_METHODS.has(request.method)) {
    if (auth.kind === 'visitor')
      throw unauthorized('Unauthorized request. Connect a wallet (sign in) before changing anything.');
    const token = request.headers[CSRF_HEADER];
    if (typeof token !== 'string' || token === '')
      throw forbidden(`Missing CSRF token: send the ${CSRF_HEADER} header from GET /api/v0/console/session.`);
    if (!safeEqual(token, csrfTokenFor(ctx, auth.id))) throw forbidden('Invalid CSRF token.');
  }
  request.browserAuth = auth;
  // requireSession / getSession see the console user (a visitor has no session)
  request.sessionPromise = Promise.resolve(auth.session);
  return auth;
}

/** The signed-in console session of the request; 401 otherwise (API keys and bearer tokens do not qualify). */
export function requireConsoleSession(request: FastifyRequest): Session & { expiresAt: number } {
  const s = request.browserAuth?.session;
  if (!s) throw unauthorized(CONSOLE_ONLY);
  return s;
}

export async function createConsoleSession(
  ctx: AppContext,
  tx: Tx,
  who: { address: string; platformAddress: string; chain: Chain; scopes: string[] },
  now: number,
): Promise<{ cookie: string; sessionId: string; expiresAt: number }> {
  const expiresAt = now + SESSION_TTL_MS;
  const { id, secret, columns } = await newCredential(tx, 'console_sessions', who, now, expiresAt);
  await tx
    .insertInto('console_sessions')
    .values({ session_id: id, ...columns, scopes: JSON.stringify(who.scopes), revoked_at: null })
    .execute();
  return { cookie: `s.${id}.${secret}`, sessionId: id, expiresAt };
}
