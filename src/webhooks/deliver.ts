// Sends due status webhook deliveries (outbox.ts) through the egress module. Each try signs the
// exact body bytes with the plugin's current secret and a fresh timestamp; a 2xx is delivered,
// anything else (another status, a refused address, a timeout, a redirect) schedules a retry.
import type { AppContext } from '../context.ts';
import { egressFor, EgressError } from '../egress/index.ts';
import { signRequest } from '../egress/signature.ts';
import { readPluginSecret } from '../plugin-documents/storage.ts';
import { randomHex } from '../shared/crypto.ts';
import { leaseDue, payloadBytes, payloadHeaders, recordTry, type LeasedDelivery, type TryOutcome } from './outbox.ts';

/** Deliveries taken per pass; they are sent concurrently, all within one lease. */
const BATCH = 32;
const POLL_MS = 1000;
/** Longest error text kept (an endpoint's message may be long). */
const MAX_ERROR_CHARS = 500;

export interface PassResult {
  taken: number;
  delivered: number;
  failed: number;
}

/** One pass: takes the due deliveries (up to BATCH) and tries each once. */
export async function deliverDue(ctx: AppContext, owner = `${process.pid}-${randomHex(6)}`): Promise<PassResult> {
  const leased = await leaseDue(ctx.db, ctx.dialect, owner, ctx.clock.now(), BATCH);
  const outcomes = await Promise.all(leased.map((d) => tryOnce(ctx, d, owner)));
  return { taken: leased.length, delivered: outcomes.filter((o) => o).length, failed: outcomes.filter((o) => !o).length };
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
  if (!recorded) ctx.log.warn({ deliveryId: delivery.deliveryId }, 'webhook delivery: lease lost before the result was recorded');
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
      headers: { ...payloadHeaders(ctx.keyring, delivery.headersEnc), ...signRequest(secret, body, ctx.clock.now()), 'content-type': 'application/json' },
      body,
    });
    if (res.status >= 200 && res.status < 300) return { delivered: true, status: res.status };
    return { delivered: false, status: res.status, error: clip(`the endpoint answered ${res.status}${messageOf(res.body)}`) };
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

/** The background loop: a pass whenever the last one found work, else every POLL_MS. */
export function startDeliveries(ctx: AppContext, opts: { pollMs?: number } = {}): { stop(): Promise<void> } {
  const owner = `${process.pid}-${randomHex(6)}`;
  const pollMs = opts.pollMs ?? POLL_MS;
  let stopped = false;
  let wake: (() => void) | null = null;
  const done = (async () => {
    while (!stopped) {
      let taken = 0;
      try {
        taken = (await deliverDue(ctx, owner)).taken;
      } catch (err) {
        ctx.log.error({ err }, 'webhook deliveries: pass failed');
      }
      if (stopped || taken > 0) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => resolve(), pollMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = null;
    }
  })();
  return {
    async stop() {
      stopped = true;
      (wake as (() => void) | null)?.();
      await done;
    },
  };
}
