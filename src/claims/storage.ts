// Claims storage: table shapes (composed into src/db/schema.ts) and the small queries shared by
// the claim documents, the engine and the queue.
import { type Generated, sql } from 'kysely';
import type { AppContext } from '../context.ts';
import type { DB, Tx } from '../db/index.ts';
import { escapeLike } from '../shared/like.ts';
import { ADDRESS_NUMBERS_ON_CLAIM, READ_STATE, runHot } from './hot-sql.ts';

export interface ClaimTable {
  claim_id: string;
  created_by: string;
  managed_by: string;
  collection_id: string;
  standalone_claim: number;
  /** JSON TrackerDetails, or null. */
  tracker_details: string | null;
  /** `collectionId|approvalId|challengeTrackerId|approvalLevel|approverAddress` for on-chain claims. */
  tracker_key: string | null;
  /** JSON [{ pluginId, instanceId, version, publicParams }]. */
  plugins: string;
  /** Encrypted JSON { [instanceId]: privateParams }. */
  private_params: string;
  /** Encrypted claim-level seed of on-chain claims. */
  seed_code: string | null;
  use_creator_address_as_leaf: number;
  assign_method: string;
  /** JSON SatisfyMethod, or null. */
  satisfy_method: string | null;
  /** JSON display fields: rewards, metadata, categories, estimatedCost, estimatedTime, approach. */
  details: string;
  /** Lowercased metadata.name, for substring search. */
  name_search: string;
  show_in_search: number;
  /** Queue lane: `c:<collectionId>` for collection-linked claims, `k:<claimId>` otherwise. */
  lane: string;
  version: number;
  created_at: number;
  last_updated: number;
  deleted_at: number | null;
  /** Test claims (testClaims: true) vanish at this time. */
  test_expires_at: number | null;
}

export interface ClaimStateTable {
  claim_id: string;
  instance_id: string;
  key: string;
  /** JSON value. */
  value: string;
}

export interface ClaimNumberTable {
  claim_id: string;
  claim_number: number;
  platform_address: string;
  claim_attempt_id: string;
}

export type AttemptStatus = 'queued' | 'success' | 'failure';

export interface ClaimAttemptTable {
  seq: number;
  claim_attempt_id: string;
  claim_id: string;
  lane: string;
  platform_address: string;
  status: AttemptStatus;
  success: number | null;
  error: string;
  claim_number: number;
  /** Encrypted JSON AttemptPayload while queued; null once resolved (inputs are not kept). */
  payload: string | null;
  attempted_at: number;
  resolved_at: number | null;
  /** The address as the claimer sent it, when that is not `platform_address` itself (the 0x form); else ''. */
  claimer_address: Generated<string>;
}

/** The refused-tries log (claims/refusals.ts, migration 0026): the newest rows per claim. */
export interface ClaimRefusalTable {
  seq: Generated<number>;
  claim_id: string;
  refused_at: number;
  platform_address: string;
  claimer_address: string;
  instance_id: string;
  plugin_id: string;
  error: string;
}

/** The guess throttle's buckets per claim (claims/guess-throttle.ts, migration 0020). */
export interface ClaimGuessBucketTable {
  claim_id: string;
  /** 'address:<native address>', 'ip:<IPv4 or IPv6 /64>', 'net:<IPv6 /48>', 'claim', or 'minute:<window start>'. */
  scope: string;
  /** address: when it may try again (set by a wrong answer); ip, claim: the rolling limit's theoretical arrival time; minute: the window's start. */
  tat: number;
  /** address: wrong answers in a row; claim: all since creation; ip, net, minute: counted. */
  failures: number;
  last_failure_at: number;
  /** address: its evaluations running now (each may turn out a wrong answer). */
  in_flight: number;
  /** address: when `in_flight` lapses (a process that died mid-evaluation leaves it behind). */
  in_flight_until: number;
}

export interface ClaimTables {
  claims: ClaimTable;
  claim_guess_buckets: ClaimGuessBucketTable;
  claim_state: ClaimStateTable;
  claim_numbers: ClaimNumberTable;
  claim_attempts: Omit<ClaimAttemptTable, 'seq'> & { seq: Generated<number> };
  claim_refusals: ClaimRefusalTable;
}

// Its tables join the database's type (db/schema.ts).
declare module '../db/schema.ts' {
  interface Database extends ClaimTables {}
}

type Db = DB | Tx;

/** Live = not soft-deleted and not an expired test claim. */
export function liveClaimQuery(db: Db, now: number) {
  return db
    .selectFrom('claims')
    .where('deleted_at', 'is', null)
    .where((eb) => eb.or([eb('test_expires_at', 'is', null), eb('test_expires_at', '>', now)]));
}

/**
 * The live claims holding an instance of `pluginId` whose public param `key` is the string `value`:
 * found by the stored JSON of their public plugin instances, then confirmed.
 */
export async function liveClaimsWithPublicParam(
  db: Db,
  now: number,
  pluginId: string,
  key: string,
  value: string,
): Promise<string[]> {
  const needle = `${JSON.stringify(key)}:${JSON.stringify(value)}`;
  const rows = await liveClaimQuery(db, now)
    .select(['claim_id', 'plugins'])
    .where(sql<boolean>`plugins like ${`%${escapeLike(needle)}%`} escape '\\'`)
    .execute();
  return rows
    .filter((row) =>
      (JSON.parse(row.plugins) as Array<{ pluginId: string; publicParams?: Record<string, unknown> }>).some(
        (i) => i.pluginId === pluginId && i.publicParams?.[key] === value,
      ),
    )
    .map((row) => row.claim_id);
}

/**
 * A plugin instance's state value, or undefined. Given the deployment (`app`) and its own handle,
 * the read runs on SQLite's synchronous fast path when Kysely is idle (hot-sql.ts).
 */
export async function readStateValue(
  db: Db,
  claimId: string,
  instanceId: string,
  key: string,
  app?: Partial<Pick<AppContext, 'db' | 'sqlite'>>,
): Promise<unknown> {
  const rows = await runHot<{ value: string }>(db, READ_STATE, [claimId, instanceId, key], app);
  return rows[0] ? (JSON.parse(rows[0].value) as unknown) : undefined;
}

export async function writeStateValue(
  db: Db,
  claimId: string,
  instanceId: string,
  key: string,
  value: unknown,
): Promise<void> {
  if (value === null || value === undefined) {
    await db
      .deleteFrom('claim_state')
      .where('claim_id', '=', claimId)
      .where('instance_id', '=', instanceId)
      .where('key', '=', key)
      .execute();
    return;
  }
  await db
    .insertInto('claim_state')
    .values({ claim_id: claimId, instance_id: instanceId, key, value: JSON.stringify(value) })
    .onConflict((oc) => oc.columns(['claim_id', 'instance_id', 'key']).doUpdateSet({ value: JSON.stringify(value) }))
    .execute();
}

export async function claimNumberUsed(db: Db, claimId: string, claimNumber: number): Promise<boolean> {
  const row = await db
    .selectFrom('claim_numbers')
    .select('claim_number')
    .where('claim_id', '=', claimId)
    .where('claim_number', '=', claimNumber)
    .executeTakeFirst();
  return row !== undefined;
}

/** The address's claim numbers on one claim, ascending. */
export async function claimNumbersOf(db: Db, claimId: string, platformAddress: string): Promise<number[]> {
  const rows = await runHot<{ claim_number: number }>(db, ADDRESS_NUMBERS_ON_CLAIM, [platformAddress, claimId]);
  return rows.map((r) => r.claim_number);
}

export async function allClaimNumbers(
  db: Db,
  claimId: string,
): Promise<Array<{ claimNumber: number; platformAddress: string }>> {
  const rows = await db
    .selectFrom('claim_numbers')
    .select(['claim_number', 'platform_address'])
    .where('claim_id', '=', claimId)
    .orderBy('claim_number')
    .execute();
  return rows.map((r) => ({ claimNumber: r.claim_number, platformAddress: r.platform_address }));
}
