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
import { authenticateBrowser } from '../portal/console-session.ts';
import { findActiveApiKeyByHash, LAST_USE_RESOLUTION_MS, touchApiKey } from './storage.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** No API key needed (the route is called from a user's browser). */
    public?: boolean;
  }
  interface FastifyRequest {
    apiKeyId?: string;
  }
}

const MISSING = 'Unauthorized request. This route is only accessible with an API key.';
const INVALID = 'Unauthorized request. Error validating API key.';

/** Fixed one-minute windows per key; in-process (documented: per service process). */
function rateLimiter(perMinute: number, now: () => number) {
  let window = 0;
  let counts = new Map<string, number>();
  return (keyId: string) => {
    const w = Math.floor(now() / 60_000);
    if (w !== window) {
      window = w;
      counts = new Map();
    }
    const n = (counts.get(keyId) ?? 0) + 1;
    counts.set(keyId, n);
    if (n > perMinute) throw tooManyRequests('Exceeded rate limit. Too many requests.', 60 - Math.floor((now() % 60_000) / 1000));
  };
}

export type ApiKeyGate = (request: FastifyRequest, reply: unknown, done: (err?: Error) => void) => void;

/** Installs the gate on every /api/ route registered after this call; returns it for the not-found handler. */
export function registerApiKeyGate(app: FastifyInstance, ctx: AppContext): ApiKeyGate {
  const ttl = ctx.config.apiKeyCacheMs;
  const verified = new Map<string, { id: string; at: number }>();
  const limit = ctx.config.rateLimitPerMinute > 0 ? rateLimiter(ctx.config.rateLimitPerMinute, () => ctx.clock.now()) : null;
  const check = async (request: FastifyRequest, presented: string): Promise<void> => {
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
    if (ttl > 0) {
      if (verified.size >= 10_000) verified.clear(); // bounded: keys are few, this never trims in practice
      verified.set(presented, { id: key.id, at: Date.now() });
    }
    admit(request, key.id);
  };
  const admit = (request: FastifyRequest, keyId: string) => {
    limit?.(keyId);
    request.apiKeyId = keyId;
  };
  // Callback-style hook: a key verified within the TTL passes synchronously, without a promise.
  const gate = (request: FastifyRequest, _reply: unknown, done: (err?: Error) => void) => {
    const header = request.headers['x-api-key'];
    if (typeof header !== 'string' || header === '') {
      if (request.headers.cookie === undefined) return done(unauthorized(MISSING));
      authenticateBrowser(ctx, request)
        .then((auth) => {
          if (!auth) throw unauthorized(MISSING);
          admit(request, `console:${auth.id}`);
        })
        .then(() => done(), done);
      return;
    }
    // Keyed by the presented key: a hit costs a map lookup, not a hash (the database holds only
    // hashes; this map lives in process memory for at most API_KEY_CACHE_MS per entry).
    const cached = verified.get(header);
    if (cached && Date.now() - cached.at <= ttl) {
      try {
        admit(request, cached.id);
      } catch (err) {
        return done(err as Error);
      }
      return done();
    }
    check(request, header).then(() => done(), done);
  };
  // The gate is attached to each /api/ route as it is registered (no per-request URL or config
  // test on other routes); unknown /api/ paths get it through the not-found handler (server.ts).
  app.decorateRequest('apiKeyId', undefined);
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/api/') || route.config?.public) return;
    const own = route.onRequest;
    route.onRequest = own === undefined ? [gate] : Array.isArray(own) ? [gate, ...own] : [gate, own];
  });
  return gate;
}
