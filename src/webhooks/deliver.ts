// Sends due status webhook deliveries (outbox.ts) through the egress module. Each try signs the
// exact body bytes with the plugin's current secret and a fresh timestamp; a 2xx is delivered,
// anything else (another status, a refused address, a timeout, a redirect) schedules a retry.
//
// Concurrency (docs/security.md, "Webhook delivery concurrency"): the loop keeps up to
// MAX_IN_FLIGHT deliveries in flight, at most PER_ORIGIN of them per endpoint origin, and leases
// a delivery only when it can start it. A delivery that ends frees its slot and the loop leases
// again at once, so an origin that never answers holds PER_ORIGIN slots for its 10 s deadline and
// delays only its own backlog; every other origin is sent within the loop's next pass.
import type { AppContext } from '../context.ts';
import { egressFor, EgressError } from '../egress/index.ts';
import { signRequest } from '../egress/signature.ts';
import { readPluginSecret } from '../plugin-documents/storage.ts';
import { randomHex } from '../shared/crypto.ts';
import { startPollLoop, type PollLoop } from '../shared/poll-loop.ts';
import { leaseDue, payloadBytes, payloadHeaders, recordTry, type LeasedDelivery, type TryOutcome } from './outbox.ts';

/** Deliveries in flight per endpoint origin, per process (below the egress pool's 32 connections). */
export const PER_ORIGIN = 8;
/** Deliveries in flight per process, over all origins. */
export const MAX_IN_FLIGHT = 256;
/** Deliveries taken by one `deliverDue` pass; they are sent concurrently, all within one lease. */
const BATCH = 32;
const POLL_MS = 1000;
/** Longest error text kept (an endpoint's message may be long). */
const MAX_ERROR_CHARS = 500;

export interface PassResult {
  taken: number;
  delivered: number;
  failed: number;
}

/** One pass: takes the due deliveries (up to BATCH, PER_ORIGIN per origin) and tries each once. */
export async function deliverDue(ctx: AppContext, owner = `${process.pid}-${randomHex(6)}`): Promise<PassResult> {
  const leased = await leaseDue(ctx.db, ctx.dialect, owner, ctx.clock.now(), { limit: BATCH, perOrigin: PER_ORIGIN });
  const outcomes = await Promise.all(leased.map((d) => tryOnce(ctx, d, owner)));
  return {
    taken: leased.length,
    delivered: outcomes.filter((o) => o).length,
    failed: outcomes.filter((o) => !o).length,
  };
}

async function tryOnce(ctx: AppContext, delivery: LeasedDelivery, owner: string): Promise<boolean> {
  let outcome: TryOutcome;
  try {
    outcome = await send(ctx, delivery);
  } catch (err) {
    // a fault of ours (database, decryption): logged, retried on the schedule
    ctx.log.error({ err, deliveryId: delivery.deliveryId }, 'webhook delivery: try failed');
    outcome = { delivered: false, status: null, error: 'internal error while sending' };
  }
  const recorded = await recordTry(ctx.db, delivery, owner, ctx.clock.now(), outcome);
  if (!recorded)
    ctx.log.warn({ deliveryId: delivery.deliveryId }, 'webhook delivery: lease lost before the result was recorded');
  return outcome.delivered;
}

async function send(ctx: AppContext, delivery: LeasedDelivery): Promise<TryOutcome> {
  const secret = await readPluginSecret(ctx.db, ctx.keyring, delivery.pluginId);
  if (secret === null) return { delivered: false, status: null, error: 'the plugin was deleted', giveUp: true };
  const body = payloadBytes(ctx.keyring, delivery.bodyEnc, secret);
  try {
    const res = await egressFor(ctx).request({
      url: delivery.url,
      method: 'POST',
      headers: {
        ...payloadHeaders(ctx.keyring, delivery.headersEnc),
        ...signRequest(secret, body, ctx.clock.now()),
        'content-type': 'application/json',
      },
      body,
    });
    if (res.status >= 200 && res.status < 300) return { delivered: true, status: res.status };
    return {
      delivered: false,
      status: res.status,
      error: clip(`the endpoint answered ${res.status}${messageOf(res.body)}`),
    };
  } catch (err) {
    if (err instanceof EgressError) return { delivered: false, status: null, error: clip(err.reason) };
    throw err;
  }
}

/** The endpoint's `{ message }`, when its body has one. */
function messageOf(body: Buffer): string {
  try {
    const json = JSON.parse(body.toString('utf8')) as { message?: unknown };
    return typeof json?.message === 'string' && json.message !== '' ? `: ${json.message}` : '';
  } catch {
    return '';
  }
}

const clip = (s: string) => (s.length > MAX_ERROR_CHARS ? `${s.slice(0, MAX_ERROR_CHARS - 1)}…` : s);

/**
 * The background loop: leases what it can start (free slots, origins not full), starts each
 * delivery on its own, and leases again as soon as one ends or, when nothing was due, every
 * pollMs. stop() waits for the deliveries in flight.
 */
export function startDeliveries(
  ctx: AppContext,
  opts: { pollMs?: number; perOrigin?: number; maxInFlight?: number } = {},
): { stop(): Promise<void> } {
  const owner = `${process.pid}-${randomHex(6)}`;
  const pollMs = opts.pollMs ?? POLL_MS;
  const perOrigin = opts.perOrigin ?? PER_ORIGIN;
  const maxInFlight = opts.maxInFlight ?? MAX_IN_FLIGHT;
  const inFlight = new Map<string, number>();
  const running = new Set<Promise<void>>();

  const start = (d: LeasedDelivery) => {
    inFlight.set(d.origin, (inFlight.get(d.origin) ?? 0) + 1);
    const p = tryOnce(ctx, d, owner)
      .catch((err) => ctx.log.error({ err, deliveryId: d.deliveryId }, 'webhook delivery: try failed'))
      .then(() => {
        const n = inFlight.get(d.origin)! - 1;
        if (n === 0) inFlight.delete(d.origin);
        else inFlight.set(d.origin, n);
        running.delete(p);
        // a freed slot: lease again now (a wake during a round skips the wait after it)
        loop.wake();
      });
    running.add(p);
  };

  const loop: PollLoop = startPollLoop({
    async round() {
      const leased = await leaseDue(ctx.db, ctx.dialect, owner, ctx.clock.now(), {
        limit: maxInFlight - running.size,
        perOrigin,
        inFlight,
      });
      // started even when stopping: stop() waits for them, and their leases are not left to expire
      for (const d of leased) start(d);
      // more may be due (the lease was bounded): lease again now while slots are free
      return leased.length > 0 && running.size < maxInFlight ? 0 : pollMs;
    },
    onError(err) {
      ctx.log.error({ err }, 'webhook deliveries: pass failed');
      return pollMs;
    },
  });
  return {
    async stop() {
      await loop.stop();
      await Promise.all(running);
    },
  };
}
