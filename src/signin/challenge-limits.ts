// Limits of the public challenge route (it needs only a public client id and stores a row per
// call): per client IP, checked before the body is read, and per app, checked once the client id is
// known to exist. Counted by the shared rate limiter (api-keys/rate-limit.ts): one budget across
// processes when RATE_LIMIT_STORE=database. Figures: docs/security.md.
import type { FastifyRequest } from 'fastify';
import { createRateLimiter, ipBucket, type RateLimiter } from '../api-keys/rate-limit.ts';
import type { AppContext } from '../context.ts';
import { tooManyRequests } from '../shared/errors.ts';

export interface ChallengeLimits {
  /** onRequest hook of the challenge route: the per-IP budget. */
  perIp(request: FastifyRequest, reply: unknown, done: (err?: Error) => void): void;
  /** Before a challenge of this (existing) app is stored: the per-app budget. */
  perClient(clientId: string): Promise<void>;
}

async function spend(limiter: RateLimiter | null, bucket: string, message: string): Promise<void> {
  const verdict = limiter ? await limiter.take(bucket) : null;
  if (verdict) throw tooManyRequests(`${message} Try again in ${verdict.retryAfter} s.`, verdict.retryAfter);
}

export function challengeLimits(ctx: AppContext): ChallengeLimits {
  const { perIpPerMinute, perClientPerMinute } = ctx.config.challengeLimits;
  const ip = perIpPerMinute > 0 ? createRateLimiter(ctx, perIpPerMinute) : null;
  const client = perClientPerMinute > 0 ? createRateLimiter(ctx, perClientPerMinute) : null;
  return {
    perIp(request, _reply, done) {
      spend(
        ip,
        `challenge-${ipBucket(request.ip)}`,
        `Too many sign-in requests from this IP address (${perIpPerMinute} per minute).`,
      ).then(() => done(), done);
    },
    perClient: (clientId) =>
      spend(
        client,
        `challenge-client:${clientId}`,
        `Too many sign-in requests for this app (${perClientPerMinute} per minute).`,
      ),
  };
}
