// The access table's enforcement (src/shared/access.ts): every route must have an entry, or the
// app does not start; its entry decides what the route needs before any handler runs.
// - The API-key gate: a route whose entry says `apiKey` needs `x-api-key`, or the web console's
//   session cookie in its place (same-origin, CSRF-checked: src/portal/console-session.ts).
//   `public` routes under /api/ get the per-IP limit only.
// - Then, before validation: a console-only route needs a signed-in console session; a route that
//   needs a session needs one holding the entry's scopes (the texts of requireSession).
// - After validation, a `when` field (returnSensitiveData: true) raises the requirement.
// A verified key is remembered for at most API_KEY_CACHE_MS (default 1 s): the lookup is most of
// the gate's cost, and a revocation still reaches every process sharing the database within that
// bound. Unknown keys are never cached.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import { tooManyRequests, unauthorized } from '../shared/errors.ts';
import { sha256Hex } from '../shared/crypto.ts';
import { createRateLimiter, ipBucket, type Verdict } from './rate-limit.ts';
import { assertSameOrigin, authenticateBrowser, CONSOLE_ONLY } from '../portal/console-session.ts';
import { accessOf, openApiSecurity, routeKey, type AccessRule } from '../shared/access.ts';
import { forbidden } from '../shared/errors.ts';
import { getSession, requireSession } from '../shared/session.ts';
import { findActiveApiKeyByHash, LAST_USE_RESOLUTION_MS, touchApiKey } from './storage.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's entry of the access table (set when the route is registered). */
    access?: AccessRule;
  }
  interface FastifyRequest {
    apiKeyId?: string;
    /** The key is marked as a trusted backend: its x-end-user-ip header names the end user (end-user-ip.ts). */
    apiKeyTrustedBackend?: boolean;
  }
}

const MISSING = 'Unauthorized request. This route is only accessible with an API key.';
const INVALID = 'Unauthorized request. Error validating API key.';

const LIMITED = 'Exceeded rate limit. Too many requests.';

type Done = (err?: Error) => void;

/** Applies a rate-limit verdict (possibly still pending) and calls `done`. */
function settle(verdict: Verdict | Promise<Verdict>, then: () => void, done: Done): void {
  if (verdict === null) return then();
  if (!(verdict instanceof Promise)) return done(tooManyRequests(LIMITED, verdict.retryAfter));
  verdict.then((v) => (v === null ? then() : done(tooManyRequests(LIMITED, v.retryAfter))), done);
}

export type ApiKeyGate = (request: FastifyRequest, reply: unknown, done: Done) => void;

/** Installs the gate on every /api/ route registered after this call; returns it for the not-found handler. */
export function registerApiKeyGate(app: FastifyInstance, ctx: AppContext): ApiKeyGate {
  const ttl = ctx.config.apiKeyCacheMs;
  // each entry keeps its limit bucket's name, so that a request builds no string for it
  const verified = new Map<string, { id: string; trusted: boolean; at: number; bucket: string }>();
  // Requests presenting a key that is not verified yet share one lookup: without this, every
  // request in flight when the cache entry expires looked the key up, and each one that found the
  // last use a minute old wrote it (a burst of updates of one row, waiting on each other's lock).
  const lookups = new Map<string, Promise<{ id: string; trusted: boolean }>>();
  // The last use this process wrote, per key id, so that it writes at most once a minute itself.
  const touched = new Map<string, number>();
  // Limits per key and per client IP (rate-limit.ts): shared by all processes on PostgreSQL.
  const keyLimit = ctx.config.rateLimitPerMinute > 0 ? createRateLimiter(ctx, ctx.config.rateLimitPerMinute) : null;
  const ipLimit =
    ctx.config.rateLimitPerIpPerMinute > 0 ? createRateLimiter(ctx, ctx.config.rateLimitPerIpPerMinute) : null;
  const check = async (presented: string): Promise<{ id: string; trusted: boolean }> => {
    const key = await findActiveApiKeyByHash(ctx.db, sha256Hex(presented));
    if (!key) {
      verified.delete(presented);
      throw unauthorized(INVALID);
    }
    // Last use for the console's key list: a write at most once a minute per key, off the request path.
    const now = ctx.clock.now();
    const lastUse = Math.max(
      key.last_used_at ?? Number.NEGATIVE_INFINITY,
      touched.get(key.id) ?? Number.NEGATIVE_INFINITY,
    );
    if (now - lastUse >= LAST_USE_RESOLUTION_MS) {
      if (touched.size >= 10_000) touched.clear(); // bounded like `verified`
      touched.set(key.id, now);
      touchApiKey(ctx.db, key.id, now).catch((err: unknown) => ctx.log.warn({ err }, 'could not record API key use'));
    }
    const trusted = Number(key.trusted_backend) === 1;
    if (ttl > 0) {
      if (verified.size >= 10_000) verified.clear(); // bounded: keys are few, this never trims in practice
      verified.set(presented, { id: key.id, trusted, at: Date.now(), bucket: `key:${key.id}` });
    }
    return { id: key.id, trusted };
  };
  const admit = (request: FastifyRequest, keyId: string, done: Done, trusted = false, bucket = `key:${keyId}`) => {
    request.apiKeyId = keyId;
    if (trusted) request.apiKeyTrustedBackend = true;
    if (!keyLimit) return done();
    settle(keyLimit.take(bucket), done, done);
  };
  const authenticate = (request: FastifyRequest, done: Done) => {
    const header = request.headers['x-api-key'];
    if (typeof header !== 'string' || header === '') {
      if (request.headers.cookie === undefined) return done(unauthorized(MISSING));
      // the web console's cookie session (same-origin, CSRF-checked) stands in for a key
      authenticateBrowser(ctx, request).then(
        (auth) => (auth ? admit(request, `console:${auth.id}`, done) : done(unauthorized(MISSING))),
        done,
      );
      return;
    }
    // Keyed by the presented key: a hit costs a map lookup, not a hash (the database holds only
    // hashes; this map lives in process memory for at most API_KEY_CACHE_MS per entry).
    const cached = verified.get(header);
    if (cached && Date.now() - cached.at <= ttl) return admit(request, cached.id, done, cached.trusted, cached.bucket);
    let lookup = lookups.get(header);
    if (!lookup) {
      lookup = check(header).finally(() => lookups.delete(header));
      lookups.set(header, lookup);
    }
    lookup.then((key) => admit(request, key.id, done, key.trusted), done);
  };
  // Callback-style hook: with a key verified within the TTL and budget in hand, the request passes
  // synchronously, without a promise. The IP limit comes first, so floods of bad keys are limited too.
  const gate = (request: FastifyRequest, _reply: unknown, done: Done) => {
    if (!ipLimit) return authenticate(request, done);
    settle(ipLimit.take(ipBucket(request.ip)), () => authenticate(request, done), done);
  };
  // Public /api/ routes (sign-in from a browser) have no key, but the IP limit still applies.
  const ipOnly = (request: FastifyRequest, _reply: unknown, done: Done) =>
    settle(ipLimit!.take(ipBucket(request.ip)), done, done);
  // The gate is attached to each route as it is registered, as its entry says (no per-request URL
  // or config test); unknown /api/ paths get it through the not-found handler (server.ts).
  app.decorateRequest('apiKeyId', undefined);
  app.decorateRequest('apiKeyTrustedBackend', false);
  app.addHook('onRoute', (route) => {
    const rule = route.config?.access;
    if (!rule) return;
    const hook = rule.key === 'apiKey' ? gate : route.url.startsWith('/api/') && ipLimit ? ipOnly : null;
    if (hook) route.onRequest = prepend(route.onRequest, hook);
    const before = sessionCheck(rule);
    if (before) route.preValidation = prepend(route.preValidation, before);
    const after = fieldCheck(rule);
    if (after) route.preHandler = prepend(route.preHandler, after);
  });
  return gate;
}

type Hooks<T> = T | T[] | undefined;
function prepend<T>(own: Hooks<T>, hook: T): T[] {
  return own === undefined ? [hook] : Array.isArray(own) ? [hook, ...own] : [hook, own];
}

const NO_ORIGIN = 'This request must come from the console page (Origin or Sec-Fetch-Site header missing).';

/** The entry's origin, console and session requirements, checked before validation (null: none). */
function sessionCheck(rule: AccessRule): ((request: FastifyRequest) => Promise<void>) | null {
  if (rule.sameOrigin) {
    return async (request) => {
      // Login CSRF: another site must not sign a browser in (into the attacker's account).
      assertSameOrigin(request.server.ctx, request);
      if (request.headers.origin === undefined && request.headers['sec-fetch-site'] === undefined)
        throw forbidden(NO_ORIGIN);
    };
  }
  if (rule.console === 'only') {
    return async (request) => {
      if (!request.browserAuth?.session) throw unauthorized(CONSOLE_ONLY);
    };
  }
  if (rule.session !== 'required') return null;
  const scopes = rule.scopes ?? [];
  return async (request) => {
    if (rule.consoleAnyScope && request.browserAuth?.session) return;
    await requireSession(request, ...scopes);
  };
}

/** The entry's `when`: a field value that needs a session holding scopes, checked once the request is validated. */
function fieldCheck(rule: AccessRule): ((request: FastifyRequest) => Promise<void>) | null {
  const when = rule.when;
  if (!when) return null;
  const scopes = when.scopes ?? [];
  return async (request) => {
    const input = (when.in === 'body' ? request.body : request.query) as Record<string, unknown> | null | undefined;
    if (input?.[when.field] !== when.equals) return;
    const session = await getSession(request);
    if (!session)
      throw unauthorized(
        `Unauthorized request. ${when.field} needs a signed-in session (Authorization: Bearer <access token>).`,
      );
    const missing = scopes.filter((s) => !session.scopes.includes(s));
    if (missing.length)
      throw forbidden(`${when.field} requires the session to hold the scope(s): ${missing.join(', ')}`);
  };
}

/**
 * Installs the table's check on every route registered after this call (call it before any route):
 * a route without an entry throws, so the app does not start; each route gets its entry in
 * `config.access` and its OpenAPI `security` from it. `allowUndeclared()` lets the routes that tests
 * add (`buildApp({ extend })`) in without an entry: an API key and an optional session under /api/.
 */
export function registerAccessTable(app: FastifyInstance): { allowUndeclared(): void } {
  let undeclaredAllowed = false;
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    let rule: AccessRule | undefined;
    for (const method of methods) {
      const found = accessOf(method, route.url);
      if (!found) {
        if (undeclaredAllowed) continue;
        throw new Error(
          `Route ${routeKey(method, route.url)} is not in the access table: declare who may call it in src/shared/access.ts`,
        );
      }
      if (rule && rule !== found)
        throw new Error(
          `Route ${methods.join(',')} ${route.url} has one handler but different access entries per method`,
        );
      rule = found;
    }
    rule ??= route.url.startsWith('/api/')
      ? { key: 'apiKey', session: 'optional' }
      : { key: 'public', session: 'none' };
    route.config = { ...route.config, access: rule };
    if (route.schema && !route.schema.hide) route.schema = { ...route.schema, security: openApiSecurity(rule) };
  });
  return { allowUndeclared: () => void (undeclaredAllowed = true) };
}
