// The durable claim queue. A queued attempt row IS the queue entry; there is no other broker.
//
// Lanes: attempts of one collection (or of one claim not linked to a collection) are processed
// strictly in arrival order (`seq`); different lanes run in parallel. A lane is processed in
// batches, each batch ONE transaction: plugin state changes, the claim number and every attempt's
// result commit together, or (any fault) nothing does. The transaction is the lease: a process
// killed mid-batch leaves its attempts queued (the database rolls the transaction back), and the
// next worker re-reads them; the status is re-checked (`status = 'queued'`) in the committing
// transaction, so each attempt resolves exactly once.
//
// Locks: on PostgreSQL a transaction-scoped advisory lock per lane (skipped when held: another
// worker owns the lane) plus `FOR UPDATE` on the attempts and the claim row, so several
// processes share the work and none hands out a use or a code twice. On SQLite, BEGIN IMMEDIATE
// serialises writers across processes.
//
// The batch itself is queue-batch.ts; waking the worker (in process, or by LISTEN/NOTIFY, with
// polling as the fallback) is queue-wakeup.ts. This module is the worker: its loop, the lanes and
// the attempts' evaluation.
import { sql } from 'kysely';
import type { AppContext } from '../context.ts';
import type { Tx } from '../db/index.ts';
import { startPollLoop, type PollLoop } from '../shared/poll-loop.ts';
import {
  evaluateAttempt,
  prepareExecution,
  statusWebhooks,
  unpreparedInstances,
  type AttemptOutcome,
  type EvaluateEnv,
} from './engine.ts';
import { loadClaim } from './model.ts';
import { decodePayload } from './payload.ts';
import { pluginEnv } from './plugin-env.ts';
import { Batch, NumberCollision, type QueuedRow } from './queue-batch.ts';
import { LANE_HEAD_FOR_UPDATE, LANE_LIST, QUEUE_HEAD, QUEUE_HEAD_FOR_UPDATE, runHot } from './hot-sql.ts';
import { clearLocalWorker, listenForEnqueues, setLocalWorker } from './queue-wakeup.ts';

export interface WorkerOptions {
  /** Fallback poll interval (ms). */
  pollMs?: number;
  /** Attempts per transaction. */
  batchSize?: number;
  /** Lanes processed at once (PostgreSQL; SQLite has one writer, so 1). */
  concurrency?: number;
  /** Listen for PostgreSQL notifications (default true on PostgreSQL). */
  listen?: boolean;
  /** PostgreSQL: longest reuse of the lane list while its lanes stay full (ms; default 1,000). */
  laneListMaxAgeMs?: number;
  /**
   * PostgreSQL: where in the lane list each pass starts, as a fraction of its length (0: the
   * oldest lane first). Default: a random point for every pass, so that workers sharing the list
   * start at different lanes.
   */
  laneStart?: number;
}

const ADVISORY_CLASS = 4_242_001; // namespaces our advisory locks
const MAX_FAULTS = 3;
/**
 * PostgreSQL: how long the list of lanes with queued attempts is reused while every lane on it
 * still fills its batch. Reading the list costs time in proportion to the queue (one index entry
 * per queued attempt), so re-reading it every pass of a large backlog slowed the drain; a lane
 * that is not on the list waits at most this long.
 */
const LANE_LIST_MAX_AGE_MS = 1000;

export class ClaimWorker {
  readonly ctx: AppContext;
  private readonly pollMs: number;
  private readonly batchSize: number;
  private readonly concurrency: number;
  private readonly listen: boolean;
  private readonly laneListMaxAgeMs: number;
  private readonly laneStart: number | undefined;
  private stopped = false;
  private poll: PollLoop | null = null;
  private listener: { close(): Promise<void> } | null = null;
  private faults = new Map<string, number>();
  /** Values of plugins' execution-time work (prepareExecution), by attempt and instance id. */
  private prepared = new Map<string, Record<string, unknown>>();
  /**
   * Set by a pass that may have left queued attempts behind (a full batch, or a lane list at its
   * limit): the loop runs the next pass at once instead of sleeping.
   */
  private mayHaveMore = false;
  /** PostgreSQL: the last lane list read and when (performance.now()), while reusable. */
  private laneList: { lanes: string[]; readAt: number } | null = null;
  /** Lanes of the current pass whose batch was full (their queue goes on). */
  private readonly fullLanes = new Set<string | null>();

  constructor(ctx: AppContext, opts: WorkerOptions = {}) {
    this.ctx = ctx;
    this.pollMs = opts.pollMs ?? 250;
    this.batchSize = opts.batchSize ?? 100;
    this.concurrency = ctx.dialect === 'postgres' ? (opts.concurrency ?? 4) : 1;
    this.listen = opts.listen ?? ctx.dialect === 'postgres';
    this.laneListMaxAgeMs = opts.laneListMaxAgeMs ?? LANE_LIST_MAX_AGE_MS;
    this.laneStart = opts.laneStart;
  }

  start(): this {
    setLocalWorker(this.ctx, this);
    if (this.listen) this.listener = listenForEnqueues(this.ctx, () => this.wake());
    // A pass that drained what it read needs no second, empty pass to confirm it: attempts
    // queued since then woke this loop, and other processes' are found by notification or by
    // the poll.
    const next = () => (this.mayHaveMore ? 0 : this.pollMs);
    this.poll = startPollLoop({
      round: async () => {
        await this.pass();
        return next();
      },
      onError: (err) => {
        this.ctx.log.error({ err }, 'claim queue: pass failed');
        return next();
      },
    });
    return this;
  }

  wake(): void {
    this.poll?.wake();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearLocalWorker(this.ctx, this);
    await this.poll?.stop();
    await this.listener?.close();
  }

  /** One round over the lanes with queued attempts: one batch each. Returns attempts resolved. */
  async pass(): Promise<number> {
    this.mayHaveMore = false;
    // SQLite has one writer: lanes gain nothing from separate transactions, so one transaction
    // takes the oldest queued attempts of every lane in arrival order (each lane stays in order).
    if (this.ctx.dialect === 'sqlite') return this.processLane(null, this.batchSize);
    const now = performance.now();
    let list = this.laneList && now - this.laneList.readAt < this.laneListMaxAgeMs ? this.laneList : null;
    this.laneList = null;
    if (!list) {
      // the lanes whose oldest queued attempt is oldest first, so no lane starves
      const lanes = (await runHot<{ lane: string }>(this.ctx.db, LANE_LIST, [64])).map((r) => r.lane);
      list = { lanes, readAt: now };
      if (lanes.length === 64) this.mayHaveMore = true;
    }
    this.fullLanes.clear();
    // Every worker reads the same list; each starts its pass at a point of its own, so that they
    // do not all try the same first lanes (where all but one would find the lane taken). The pass
    // still serves every lane of the list once, and each lane's attempts stay in order.
    const lanes = rotated(list.lanes, this.laneStart ?? Math.random());
    let total = 0;
    for (let i = 0; i < lanes.length && !this.stopped; i += this.concurrency) {
      const counts = await Promise.all(
        lanes.slice(i, i + this.concurrency).map((lane) => this.processLane(lane, this.batchSize)),
      );
      total += counts.reduce((a, b) => a + b, 0);
    }
    // every lane still has more: the next pass serves the same lanes without reading the list
    if (list.lanes.length > 0 && list.lanes.every((lane) => this.fullLanes.has(lane))) this.laneList = list;
    return total;
  }

  /** Processes up to `limit` attempts at the head of the lane (null: of all lanes) in one transaction. */
  private async processLane(lane: string | null, limit: number, checked = false): Promise<number> {
    const { ctx } = this;
    const isPg = ctx.dialect === 'postgres';
    let head: string | undefined;
    let pending: QueuedRow[] = [];
    let done: string[] = [];
    try {
      const resolved = await ctx.db.transaction().execute(async (tx) => {
        if (isPg && lane !== null) {
          const r = await sql<{
            locked: boolean;
          }>`select pg_try_advisory_xact_lock(${ADVISORY_CLASS}, hashtext(current_schema() || ':' || ${lane})) as locked`.execute(
            tx,
          );
          if (!r.rows[0]?.locked) return 0; // another worker owns this lane right now
        }
        const rows = await runHot<QueuedRow>(
          tx,
          lane === null ? (isPg ? QUEUE_HEAD_FOR_UPDATE : QUEUE_HEAD) : LANE_HEAD_FOR_UPDATE,
          lane === null ? [limit] : [lane, lane, limit],
        );
        if (rows.length === limit) {
          this.mayHaveMore = true;
          this.fullLanes.add(lane);
        }
        head = rows[0]?.claim_attempt_id;
        const batch = new Batch(tx, checked);
        for (const row of rows) {
          // once one attempt waits for preparation, the later ones of its lane wait too (order)
          if (batch.toPrepare.length) batch.toPrepare.push(row);
          else await this.processAttempt(tx, row, batch);
        }
        await batch.flush(ctx.clock.now(), ctx.keyring);
        pending = batch.toPrepare;
        done = batch.results.map((r) => r.id);
        return batch.results.length;
      });
      // prepared values are dropped once their attempts are committed (a rollback keeps them)
      for (const id of done) this.prepared.delete(id);
      if (pending.length) await this.prepare(pending);
      return resolved;
    } catch (err) {
      if (err instanceof NumberCollision) return this.processLane(lane, limit, true);
      if (this.stopped) return 0;
      ctx.log.error({ err, lane }, 'claim queue: batch rolled back');
      if (limit > 1) return this.processLane(lane, 1, true);
      // one attempt that keeps faulting must not block its lane forever
      if (head) {
        const n = (this.faults.get(head) ?? 0) + 1;
        this.faults.set(head, n);
        if (n >= MAX_FAULTS) {
          this.faults.delete(head);
          await this.resolveFaulted(head).catch((e) =>
            ctx.log.error({ err: e }, 'claim queue: could not resolve a faulted attempt'),
          );
          return 1;
        }
      }
      return 0;
    }
  }

  private async processAttempt(tx: Tx, row: QueuedRow, batch: Batch): Promise<void> {
    const { ctx } = this;
    const now = ctx.clock.now();
    let claim = batch.claims.get(row.claim_id);
    if (claim === undefined) {
      // the claim row lock serialises state writes with updates and with other lanes
      claim = await loadClaim(tx, ctx, row.claim_id, now, { forUpdate: ctx.dialect === 'postgres' });
      batch.claims.set(row.claim_id, claim);
    }
    let outcome: AttemptOutcome;
    if (!claim) {
      outcome = { success: false, error: `Claim ${row.claim_id} not found`, status: 404 };
    } else {
      const payload = decodePayload(ctx.keyring, row.payload ?? '');
      const input = { ...payload, platformAddress: row.platform_address };
      const replay = { ...payload.replay, ...this.prepared.get(row.claim_attempt_id) };
      if ((await unpreparedInstances(claim, input, { db: tx, app: ctx, replay })).length) {
        batch.toPrepare.push(row);
        return;
      }
      const env: EvaluateEnv = {
        ...pluginEnv(ctx, now, tx),
        mode: 'execute',
        claimAttemptId: row.claim_attempt_id,
        replay,
        readState: (c, i, k) => batch.read(c, i, k),
        claimNumberUsed: (c, n) => batch.numberUsed(c, n),
      };
      outcome = await evaluateAttempt(claim, input, env);
      for (const hook of await statusWebhooks(claim, input, env, outcome.success)) {
        batch.deliveries.push({
          pluginId: hook.pluginId,
          claimId: claim.claimId,
          instanceId: hook.instanceId,
          claimAttemptId: row.claim_attempt_id,
          url: hook.url,
          body: hook.body,
          ...(hook.headers ? { headers: hook.headers } : {}),
        });
      }
    }
    if (outcome.success) {
      for (const w of outcome.writes) batch.write(row.claim_id, w.instanceId, w.key, w.value);
      if (outcome.claimNumber !== null)
        batch.useNumber(row.claim_id, outcome.claimNumber, row.platform_address, row.claim_attempt_id);
    }
    batch.resolve(
      row.claim_attempt_id,
      outcome.success,
      outcome.success ? '' : outcome.error,
      outcome.success && outcome.claimNumber !== null ? outcome.claimNumber : -1,
    );
  }

  /**
   * Runs plugins' execution-time work (a custom plugin's call when its simulation was skipped)
   * outside any transaction, so a slow endpoint never holds the database's write lock; the next
   * pass evaluates these attempts with the values. A crash (or, on PostgreSQL, another worker
   * taking the lane) before they resolve may run the work again: calls carry the claimAttemptId.
   */
  private async prepare(rows: QueuedRow[]): Promise<void> {
    const { ctx } = this;
    const now = ctx.clock.now();
    await Promise.all(
      rows.map(async (row) => {
        const claim = await loadClaim(ctx.db, ctx, row.claim_id, now);
        if (!claim) return;
        const payload = decodePayload(ctx.keyring, row.payload ?? '');
        const input = { ...payload, platformAddress: row.platform_address };
        const replay = { ...payload.replay, ...this.prepared.get(row.claim_attempt_id) };
        const env: EvaluateEnv = {
          ...pluginEnv(ctx, now),
          mode: 'execute',
          claimAttemptId: row.claim_attempt_id,
          replay,
        };
        const ids = await unpreparedInstances(claim, input, env);
        if (!ids.length) return;
        const values = await prepareExecution(claim, input, env, ids);
        this.prepared.set(row.claim_attempt_id, { ...this.prepared.get(row.claim_attempt_id), ...values });
      }),
    );
    this.wake();
  }

  private async resolveFaulted(id: string): Promise<void> {
    await this.ctx.db
      .updateTable('claim_attempts')
      .set({
        status: 'failure',
        success: 0,
        error: 'Internal error while processing the attempt',
        claim_number: -1,
        resolved_at: this.ctx.clock.now(),
        payload: null,
      })
      .where('claim_attempt_id', '=', id)
      .where('status', '=', 'queued')
      .execute();
  }
}

/** `list` from the element at `start` (a fraction of its length) to its end, then its beginning. */
export function rotated<T>(list: readonly T[], start: number): T[] {
  const at = Math.min(list.length, Math.max(0, Math.floor(start * list.length)));
  return [...list.slice(at), ...list.slice(0, at)];
}

/** Runs passes until no attempt is queued (tests, and `platform worker --once`). */
export async function drainQueue(ctx: AppContext, opts: WorkerOptions = {}): Promise<number> {
  const worker = new ClaimWorker(ctx, { ...opts, listen: false });
  let total = 0;
  for (;;) {
    const n = await worker.pass();
    total += n;
    if (n === 0) {
      const left = await ctx.db
        .selectFrom('claim_attempts')
        .select('seq')
        .where('status', '=', 'queued')
        .limit(1)
        .executeTakeFirst();
      if (!left) return total;
    }
  }
}
