// The status webhook outbox (docs/egress-and-webhooks.md). A resolved attempt enqueues one delivery per
// instance whose plugin version has receiveStatusWebhook, in the transaction that records the
// attempt's result, so a delivery exists exactly when the result does. The `webhook-deliveries`
// loop (deliver.ts) sends due rows.
//
// Schedule: the first try is immediate. After a failed try number n (1-based) of the current
// schedule, the next one waits 1 h × 2^(n-1), each delay capped at 7 days (1 h, 2 h, 4 h, …,
// 128 h, then 7 days). After MAX_TRIES failed tries the delivery is given up (`failed`), with
// its last error kept. The owner may redeliver any delivery, which starts a new schedule.
import { sql } from 'kysely';
import type { DB, Tx } from '../db/index.ts';
import { randomHex, type Keyring } from '../shared/crypto.ts';
import { originOf } from './origin.ts';
import type { DeliveryStatus, WebhookDeliveryTable } from './storage.ts';

export type { DeliveryStatus };

export const RETRY_BASE_MS = 60 * 60_000;
export const RETRY_CAP_MS = 7 * 24 * 60 * 60_000;
/** Tries per schedule: the first and nine retries (the last retry waits the 7-day cap). */
export const MAX_TRIES = 10;
/** How long a taken delivery belongs to its process: above the 10 s call deadline, with room for the database. */
export const LEASE_MS = 30_000;

export interface NewDelivery {
  pluginId: string;
  claimId: string;
  instanceId: string;
  claimAttemptId: string;
  /** The version's verificationCall.uri. */
  url: string;
  /**
   * The plugin request payload with `_attemptStatus` 'success' or 'failure'. Its `pluginSecret`
   * is not stored: each try fills in the plugin's current secret (a rotated secret applies to
   * pending deliveries too).
   */
  body: Record<string, unknown>;
  /** The payload's headerField values, sent as headers as in the plugin call. */
  headers?: Record<string, string>;
}

/** Delay before the try that follows `failedTries` failed tries (≥ 1) of a schedule. */
export function retryDelayMs(failedTries: number): number {
  return Math.min(RETRY_BASE_MS * 2 ** (failedTries - 1), RETRY_CAP_MS);
}

/**
 * Enqueues deliveries; call it inside the transaction that records the attempt's result. The
 * payload is encrypted at rest (it carries private params). A delivery already enqueued for the
 * same attempt and instance is kept as it is.
 */
export async function enqueueDeliveries(
  db: DB | Tx,
  deliveries: NewDelivery[],
  now: number,
  keyring: Keyring,
): Promise<void> {
  if (deliveries.length === 0) return;
  if (!keyring) throw new Error('enqueueDeliveries needs the keyring: webhook payloads are encrypted at rest');
  const rows = deliveries.map((d) => {
    const body = 'pluginSecret' in d.body ? { ...d.body, pluginSecret: '' } : d.body;
    return {
      delivery_id: `wh_${randomHex(12)}`,
      plugin_id: d.pluginId,
      claim_id: d.claimId,
      instance_id: d.instanceId,
      claim_attempt_id: d.claimAttemptId,
      url: d.url,
      origin: originOf(d.url),
      body_enc: keyring.encrypt(JSON.stringify(body)),
      headers_enc: d.headers && Object.keys(d.headers).length > 0 ? keyring.encrypt(JSON.stringify(d.headers)) : null,
      status: 'pending' as const,
      attempts: 0,
      retries: 0,
      next_try_at: now,
      created_at: now,
    };
  });
  await db
    .insertInto('webhook_deliveries')
    .values(rows)
    .onConflict((oc) => oc.columns(['claim_attempt_id', 'instance_id']).doNothing())
    .execute();
}

/** The headerField values to send with the payload. */
export function payloadHeaders(keyring: Keyring, headersEnc: string | null): Record<string, string> {
  return headersEnc === null ? {} : (JSON.parse(keyring.decrypt(headersEnc)) as Record<string, string>);
}

/** The payload as sent: the stored body with the current secret in its pluginSecret field. */
export function payloadBytes(keyring: Keyring, bodyEnc: string, pluginSecret: string): string {
  const body = JSON.parse(keyring.decrypt(bodyEnc)) as Record<string, unknown>;
  if ('pluginSecret' in body) body.pluginSecret = pluginSecret;
  return JSON.stringify(body);
}

export interface LeasedDelivery {
  deliveryId: string;
  pluginId: string;
  url: string;
  origin: string;
  bodyEnc: string;
  headersEnc: string | null;
  retries: number;
}

export interface LeaseLimits {
  /** Deliveries taken at most. */
  limit: number;
  /** Deliveries in flight per origin at most, those already in flight included. */
  perOrigin: number;
  /** The taker's deliveries in flight per origin (not counted in `limit`). */
  inFlight?: ReadonlyMap<string, number>;
}

/**
 * Takes due deliveries for `owner` until now + LEASE_MS, earliest first, without taking an origin
 * past `perOrigin` deliveries in flight: an origin already full is left out of the query, so its
 * backlog is never what fills a lease. A row whose lease expired (its process died) is due again.
 *
 * Two statements: the candidates, then the lease of exactly those ids, re-checked. A single
 * `update … where id in (select … limit n for update skip locked)` leased every due row on
 * PostgreSQL whenever the planner ran the locking subquery once per outer row (a nested-loop
 * semi join, its plan on a fresh table): each run skipped the rows already updated and took the
 * next n. On PostgreSQL the lease still locks with `skip locked`, so concurrent takers get
 * disjoint sets without waiting on each other; SQLite has one writer at a time.
 */
export async function leaseDue(
  db: DB,
  dialect: 'sqlite' | 'postgres',
  owner: string,
  now: number,
  limits: LeaseLimits,
): Promise<LeasedDelivery[]> {
  const inFlight = limits.inFlight ?? new Map<string, number>();
  const full = [...inFlight].filter(([, n]) => n >= limits.perOrigin).map(([origin]) => origin);
  if (limits.limit <= 0) return [];
  let query = db
    .selectFrom('webhook_deliveries')
    .select(['delivery_id', 'origin'])
    .where('status', '=', 'pending')
    .where('next_try_at', '<=', now)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]));
  if (full.length > 0) query = query.where('origin', 'not in', full);
  // twice the limit: a partly busy origin's surplus is skipped below without starving the rest
  const candidates = await query
    .orderBy('next_try_at')
    .orderBy('delivery_id')
    .limit(limits.limit * 2)
    .execute();
  const taken = new Map(inFlight);
  const ids: string[] = [];
  for (const c of candidates) {
    const n = taken.get(c.origin) ?? 0;
    if (n >= limits.perOrigin) continue;
    taken.set(c.origin, n + 1);
    ids.push(c.delivery_id);
    if (ids.length === limits.limit) break;
  }
  if (ids.length === 0) return [];
  const chosen = db.selectFrom('webhook_deliveries').select('delivery_id').where('delivery_id', 'in', ids);
  const rows = await db
    .updateTable('webhook_deliveries')
    .set({ lease_owner: owner, lease_until: now + LEASE_MS })
    .where('delivery_id', 'in', dialect === 'postgres' ? chosen.modifyEnd(sql`for update skip locked`) : chosen)
    // re-checked here: another taker may have leased a candidate since it was read
    .where('status', '=', 'pending')
    .where('next_try_at', '<=', now)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
    .returning(['delivery_id', 'plugin_id', 'url', 'origin', 'body_enc', 'headers_enc', 'retries'])
    .execute();
  return rows.map((r) => ({
    deliveryId: r.delivery_id,
    pluginId: r.plugin_id,
    url: r.url,
    origin: r.origin,
    bodyEnc: r.body_enc,
    headersEnc: r.headers_enc,
    retries: r.retries,
  }));
}

export type TryOutcome =
  | { delivered: true; status: number }
  | { delivered: false; status: number | null; error: string; giveUp?: boolean };

/**
 * Records one try of a leased delivery and releases the lease. Only the lease holder writes: a
 * process that outlived its lease records nothing (the new holder's result stands). Returns
 * whether the record was written.
 */
export async function recordTry(
  db: DB,
  delivery: LeasedDelivery,
  owner: string,
  now: number,
  outcome: TryOutcome,
): Promise<boolean> {
  const retries = delivery.retries + 1;
  const gaveUp = !outcome.delivered && (outcome.giveUp === true || retries >= MAX_TRIES);
  const res = await db
    .updateTable('webhook_deliveries')
    .set((eb) => ({
      attempts: eb('attempts', '+', 1),
      last_try_at: now,
      last_status: outcome.status,
      lease_owner: null,
      lease_until: null,
      ...(outcome.delivered
        ? { status: 'delivered' as const, delivered_at: now, next_try_at: null, last_error: null }
        : gaveUp
          ? { status: 'failed' as const, retries, next_try_at: null, last_error: outcome.error }
          : { retries, next_try_at: now + retryDelayMs(retries), last_error: outcome.error }),
    }))
    .where('delivery_id', '=', delivery.deliveryId)
    .where('lease_owner', '=', owner)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

export interface DeliveryView {
  deliveryId: string;
  pluginId: string;
  claimId: string;
  claimAttemptId: string;
  instanceId: string;
  /** 'pending' (waiting for its next try or being sent), 'delivered', or 'failed' (given up). */
  status: DeliveryStatus;
  attempts: number;
  /** UNIX ms of the next try; null when delivered or given up. */
  nextTryAt: number | null;
  lastTryAt: number | null;
  lastError: string | null;
  lastStatus: number | null;
  /** UNIX ms of the 2xx; set exactly while the status is 'delivered' (a redeliver clears it). */
  deliveredAt: number | null;
  createdAt: number;
}

export function deliveryView(
  r: Omit<
    WebhookDeliveryTable,
    'body_enc' | 'headers_enc' | 'url' | 'origin' | 'lease_owner' | 'lease_until' | 'retries'
  >,
): DeliveryView {
  return {
    deliveryId: r.delivery_id,
    pluginId: r.plugin_id,
    claimId: r.claim_id,
    claimAttemptId: r.claim_attempt_id,
    instanceId: r.instance_id,
    status: r.status,
    attempts: Number(r.attempts),
    nextTryAt: r.next_try_at === null ? null : Number(r.next_try_at),
    lastTryAt: r.last_try_at === null ? null : Number(r.last_try_at),
    lastError: r.last_error,
    lastStatus: r.last_status,
    deliveredAt: r.delivered_at === null ? null : Number(r.delivered_at),
    createdAt: Number(r.created_at),
  };
}

export const DELIVERY_VIEW_COLUMNS = [
  'delivery_id',
  'plugin_id',
  'claim_id',
  'claim_attempt_id',
  'instance_id',
  'status',
  'attempts',
  'next_try_at',
  'last_try_at',
  'last_error',
  'last_status',
  'delivered_at',
  'created_at',
] as const;

/**
 * Schedules a delivery for an immediate try with a fresh schedule. 'in-flight' when a process
 * is sending it right now (a second concurrent send is never started).
 */
export async function redeliver(
  db: DB,
  deliveryId: string,
  now: number,
): Promise<'scheduled' | 'in-flight' | 'not-found'> {
  const res = await db
    .updateTable('webhook_deliveries')
    // deliveredAt means delivered: a pending delivery has none until a new try gets a 2xx
    .set({ status: 'pending', retries: 0, next_try_at: now, delivered_at: null })
    .where('delivery_id', '=', deliveryId)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) === 1) return 'scheduled';
  const exists = await db
    .selectFrom('webhook_deliveries')
    .select('delivery_id')
    .where('delivery_id', '=', deliveryId)
    .executeTakeFirst();
  return exists ? 'in-flight' : 'not-found';
}
