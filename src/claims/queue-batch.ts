// One batch of the claim queue: the attempts of a lane taken in one transaction (queue.ts). Later
// attempts see earlier attempts' state changes and claim numbers; everything reaches the database
// in a few statements at the end, inside the transaction, so all of it commits or none does.
import { sql } from 'kysely';
import { isUniqueViolation, type Tx } from '../db/index.ts';
import type { Keyring } from '../shared/crypto.ts';
import { enqueueDeliveries, type NewDelivery } from '../webhooks/outbox.ts';
import type { ClaimRecord } from './model.ts';
import { insertRows, runHot } from './hot-sql.ts';
import { claimNumberUsed, readStateValue, writeStateValue } from './storage.ts';

const INSERT_NUMBERS = insertRows('claim_numbers', [
  'claim_id',
  'claim_number',
  'platform_address',
  'claim_attempt_id',
]);

/** A queued attempt as the worker reads it. */
export interface QueuedRow {
  seq: number;
  claim_attempt_id: string;
  claim_id: string;
  platform_address: string;
  payload: string | null;
}

/** A claim number some other writer took (optimistic mode): the lane re-runs in checked mode. */
export class NumberCollision extends Error {}

/**
 * The state one batch (one transaction) reads and writes: later attempts see earlier attempts'
 * changes; the changes reach the database in a few statements at the end, inside the transaction.
 */
export class Batch {
  readonly claims = new Map<string, ClaimRecord | null>();
  private readonly tx: Tx;
  private readonly values = new Map<string, { claimId: string; instanceId: string; key: string; value: unknown }>();
  private readonly dirty = new Set<string>();
  private readonly numbers = new Set<string>();
  private readonly ledger: Array<{
    claim_id: string;
    claim_number: number;
    platform_address: string;
    claim_attempt_id: string;
  }> = [];

  private readonly checked: boolean;
  readonly results: Array<{ id: string; success: boolean; error: string; claimNumber: number }> = [];
  /** Status webhooks of the batch's resolved attempts (durable outbox, same transaction). */
  readonly deliveries: NewDelivery[] = [];
  /**
   * Attempts (from the first one onwards) whose plugins have execution-time work to do outside
   * the transaction: the batch stops before them, commits, and the worker prepares them.
   */
  readonly toPrepare: QueuedRow[] = [];

  constructor(tx: Tx, checked: boolean) {
    this.tx = tx;
    this.checked = checked;
  }

  async read(claimId: string, instanceId: string, key: string): Promise<unknown> {
    const k = `${claimId}\u0000${instanceId}\u0000${key}`;
    const hit = this.values.get(k);
    if (hit) return hit.value;
    const value = await readStateValue(this.tx, claimId, instanceId, key);
    this.values.set(k, { claimId, instanceId, key, value });
    return value;
  }

  write(claimId: string, instanceId: string, key: string, value: unknown): void {
    const k = `${claimId}\u0000${instanceId}\u0000${key}`;
    this.values.set(k, { claimId, instanceId, key, value });
    this.dirty.add(k);
  }

  /**
   * Optimistic mode (the default) checks claim numbers against this batch only, and the ledger's
   * primary key checks the whole batch when `flush` inserts it; on a collision the transaction is
   * rolled back and the lane re-run in checked mode (one lookup per attempt).
   */
  async numberUsed(claimId: string, n: number): Promise<boolean> {
    if (this.numbers.has(`${claimId}\u0000${n}`)) return true;
    return this.checked ? claimNumberUsed(this.tx, claimId, n) : false;
  }

  useNumber(claimId: string, n: number, platformAddress: string, claimAttemptId: string): void {
    this.numbers.add(`${claimId}\u0000${n}`);
    this.ledger.push({
      claim_id: claimId,
      claim_number: n,
      platform_address: platformAddress,
      claim_attempt_id: claimAttemptId,
    });
  }

  resolve(id: string, success: boolean, error: string, claimNumber: number): void {
    this.results.push({ id, success, error, claimNumber });
  }

  async flush(now: number, keyring: Keyring): Promise<void> {
    // The ledger first: its primary key (claim_id, claim_number) is the check. In optimistic mode
    // a number some other writer took fails this insert; the transaction then rolls back and the
    // lane re-runs in checked mode, where every number was looked up before it was used.
    for (let i = 0; i < this.ledger.length; i += 500) {
      try {
        const chunk = this.ledger.slice(i, i + 500);
        const params: unknown[] = [];
        for (const n of chunk) params.push(n.claim_id, n.claim_number, n.platform_address, n.claim_attempt_id);
        await runHot(this.tx, INSERT_NUMBERS(chunk.length), params);
      } catch (err) {
        if (!this.checked && isUniqueViolation(err)) throw new NumberCollision();
        throw err;
      }
    }
    // every attempt's result in one statement; each must still be queued (exactly once). The
    // expected status travels with each row, so the status is compared after the lookup by
    // claim_attempt_id: as a constant, `status = 'queued'` lets PostgreSQL's planner (its
    // statistics say almost nothing is queued) hash every queued row of the table instead.
    for (let i = 0; i < this.results.length; i += 200) {
      const chunk = this.results.slice(i, i + 200);
      const values = sql.join(
        chunk.map((r) => sql`(${r.id}, ${r.success ? 1 : 0}, ${r.error}, ${r.claimNumber}, 'queued')`),
      );
      const res = await sql`
        update claim_attempts
        set status = case when cast(v.column2 as integer) = 1 then 'success' else 'failure' end,
            success = cast(v.column2 as integer),
            error = v.column3,
            claim_number = cast(v.column4 as integer),
            resolved_at = ${now},
            payload = null
        from (values ${values}) as v
        where claim_attempts.claim_attempt_id = v.column1 and claim_attempts.status = v.column5`.execute(this.tx);
      if (Number(res.numAffectedRows ?? 0) !== chunk.length)
        throw new Error('a claim attempt of this batch was resolved by someone else');
    }
    const upserts: Array<{ claim_id: string; instance_id: string; key: string; value: string }> = [];
    for (const k of this.dirty) {
      const e = this.values.get(k)!;
      if (e.value === null || e.value === undefined)
        await writeStateValue(this.tx, e.claimId, e.instanceId, e.key, null);
      else upserts.push({ claim_id: e.claimId, instance_id: e.instanceId, key: e.key, value: JSON.stringify(e.value) });
    }
    for (let i = 0; i < upserts.length; i += 200) {
      await this.tx
        .insertInto('claim_state')
        .values(upserts.slice(i, i + 200))
        .onConflict((oc) =>
          oc.columns(['claim_id', 'instance_id', 'key']).doUpdateSet((eb) => ({ value: eb.ref('excluded.value') })),
        )
        .execute();
    }
    for (let i = 0; i < this.deliveries.length; i += 200)
      await enqueueDeliveries(this.tx, this.deliveries.slice(i, i + 200), now, keyring);
  }
}
