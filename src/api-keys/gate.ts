// The API-key gate: every /api/ route needs `x-api-key` unless it is marked `config.public`
// (routes a browser calls during sign-in). A request without a key may instead carry the web
// console's session cookie (same-origin, CSRF-checked: src/portal/console-session.ts).
// A verified key is remembered for at most API_KEY_CACHE_MS (default 1 s): the lookup is most of
// the gate's cost, and a revocation still reaches every process sharing the database within that
// bound. Unknown keys are never cached.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import { tooManyRequests, unauthorized } from '../shared/errors.ts';
import { sha256Hex } from '../shared/crypto.ts';
import { createRateLimiter, ipBucket, type Verdict } from './rate-limit.ts';
import { authenticateBrowser } from '../portal/console-session.ts';
import { findActiveApiKeyByHash, LAST_USE_RESOLUTION_MS, touchApiKey } from './storage.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** No API key needed (the route is called from a user's browser). */
    public?: boolean;
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
  const verified = new Map<string, { id: string; trusted: boolean; at: number }>();
  // Limits per key and per client IP (rate-limit.ts): shared by all processes on PostgreSQL.
  const keyLimit = ctx.config.rateLimitPerMinute > 0 ? createRateLimiter(ctx, ctx.config.rateLimitPerMinute) : null;
  const ipLimit = ctx.config.rateLimitPerIpPerMinute > 0 ? createRateLimiter(ctx, ctx.config.rateLimitPerIpPerMinute) : null;
  const check = async (presented: string): Promise<{ id: string; trusted: boolean }> => {
    const key = await findActiveApiKeyByHash(ctx.db, sha256Hex(presented));
    if (!key) {
      verified.delete(presented);
      throw unauthorized(INVALID);
    }
    // Last use for the console's key list: a write at most once a minute per key, off the request path.
    const now = ctx.clock.now();
    if (key.last_used_at === null || now - key.last_used_at >= LAST_USE_RESOLUTION_MS) {
      touchApiKey(ctx.db, key.id, now).catch((err: unknown) => ctx.log.warn({ err }, 'could not record API key use'));
    }
    const trusted = Number(key.trusted_backend) === 1;
    if (ttl > 0) {
      if (verified.size >= 10_000) verified.clear(); // bounded: keys are few, this never trims in practice
      verified.set(presented, { id: key.id, trusted, at: Date.now() });
    }
    return { id: key.id, trusted };
  };
  const admit = (request: FastifyRequest, keyId: string, done: Done, trusted = false) => {
    request.apiKeyId = keyId;
    if (trusted) request.apiKeyTrustedBackend = true;
    if (!keyLimit) return done();
    settle(keyLimit.take(`key:${keyId}`), done, done);
  };
  const authenticate = (request: FastifyRequest, done: Done) => {
    const header = request.headers['x-api-key'];
    if (typeof header !== 'string' || header === '') {
      if (request.headers.cookie === undefined) return done(unauthorized(MISSING));
      // the web console's cookie session (same-origin, CSRF-checked) stands in for a key
      authenticateBrowser(ctx, request).then((auth) => (auth ? admit(request, `console:${auth.id}`, done) : done(unauthorized(MISSING))), done);
      return;
    }
    // Keyed by the presented key: a hit costs a map lookup, not a hash (the database holds only
    // hashes; this map lives in process memory for at most API_KEY_CACHE_MS per entry).
    const cached = verified.get(header);
    if (cached && Date.now() - cached.at <= ttl) return admit(request, cached.id, done, cached.trusted);
    check(header).then((key) => admit(request, key.id, done, key.trusted), done);
  };
  // Callback-style hook: with a key verified within the TTL and budget in hand, the request passes
  // synchronously, without a promise. The IP limit comes first, so floods of bad keys are limited too.
  const gate = (request: FastifyRequest, _reply: unknown, done: Done) => {
    if (!ipLimit) return authenticate(request, done);
    settle(ipLimit.take(ipBucket(request.ip)), () => authenticate(request, done), done);
  };
  // Public /api/ routes (sign-in from a browser) have no key, but the IP limit still applies.
  const ipOnly = (request: FastifyRequest, _reply: unknown, done: Done) => settle(ipLimit!.take(ipBucket(request.ip)), done, done);
  // The gate is attached to each /api/ route as it is registered (no per-request URL or config
  // test on other routes); unknown /api/ paths get it through the not-found handler (server.ts).
  app.decorateRequest('apiKeyId', undefined);
  app.decorateRequest('apiKeyTrustedBackend', false);
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/api/')) return;
    const hook = route.config?.public ? (ipLimit ? ipOnly : null) : gate;
    if (!hook) return;
    const own = route.onRequest;
    route.onRequest = own === undefined ? [hook] : Array.isArray(own) ? [hook, ...own] : [hook, own];
  });
  return gate;
}
