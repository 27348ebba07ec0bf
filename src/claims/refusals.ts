// The refused-tries log: the recent completes of a claim that its plugins refused. A refused
// complete queues nothing (attempts.ts answers the error at once), so without this log the owner
// would never hear of it.
//
// Bounded, on both sides:
// - on disk: the newest REFUSALS_PER_CLAIM rows per claim; each flush deletes the older ones of
//   the claims it wrote to, so no caller can grow the table by refusing themselves over and over;
// - in memory: at most REFUSAL_BUFFER_MAX rows wait for a flush; past that, refusals are counted
//   (`dropped`, logged once per flush) and not kept.
// Off the claim path: a refusal is pushed onto the deployment's buffer and the request answers at
// once; one background transaction per flush (every REFUSAL_FLUSH_MS at most) writes the batch
// and trims it. The read route flushes what this process still holds before reading.
import type { AppContext } from '../context.ts';
import { forbidden, notFound } from '../shared/errors.ts';
import type { Session } from '../shared/session.ts';
import { isCreatorOrManager } from './documents.ts';
import { loadClaim } from './model.ts';

/** Refused tries kept per claim (the newest). */
export const REFUSALS_PER_CLAIM = 100;
/** Refused tries held in memory between flushes, all claims together. */
export const REFUSAL_BUFFER_MAX = 5_000;
/** Longest error text kept (characters). */
export const REFUSAL_ERROR_MAX = 500;
/** Delay between a refusal and the flush that writes it. */
export const REFUSAL_FLUSH_MS = 200;

export interface RefusalRecord {
  claimId: string;
  refusedAt: number;
  platformAddress: string;
  /** The address as the claimer sent it ('' when it is the canonical form). */
  claimerAddress: string;
  instanceId: string;
  pluginId: string;
  error: string;
}

export class RefusalLog {
  private pending: RefusalRecord[] = [];
  private timer: NodeJS.Timeout | null = null;
  private chain: Promise<void> = Promise.resolve();
  private dropped = 0;
  private readonly ctx: Pick<AppContext, 'db' | 'log'>;

  constructor(ctx: Pick<AppContext, 'db' | 'log'>) {
    this.ctx = ctx;
  }

  /** Synchronous: queues the row for the next flush (or drops it when the buffer is full). */
  record(r: RefusalRecord): void {
    if (this.pending.length >= REFUSAL_BUFFER_MAX) {
      this.dropped++;
      return;
    }
    this.pending.push({ ...r, error: r.error.slice(0, REFUSAL_ERROR_MAX) });
    if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), REFUSAL_FLUSH_MS);
      this.timer.unref();
    }
  }

  /** Writes what is pending (one transaction), after any flush already running. Never throws. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.pending;
    this.pending = [];
    const dropped = this.dropped;
    this.dropped = 0;
    this.chain = this.chain.then(() => this.write(batch, dropped));
    return this.chain;
  }

  private async write(batch: RefusalRecord[], dropped: number): Promise<void> {
    if (dropped) this.ctx.log.warn({ dropped }, 'refused-tries log: buffer full, refusals not recorded');
    if (batch.length === 0) return;
    try {
      await this.ctx.db.transaction().execute(async (tx) => {
        for (let i = 0; i < batch.length; i += 500) {
          await tx
            .insertInto('claim_refusals')
            .values(
              batch.slice(i, i + 500).map((r) => ({
                claim_id: r.claimId,
                refused_at: r.refusedAt,
                platform_address: r.platformAddress,
                claimer_address: r.claimerAddress,
                instance_id: r.instanceId,
                plugin_id: r.pluginId,
                error: r.error,
              })),
            )
            .execute();
        }
        for (const claimId of new Set(batch.map((r) => r.claimId))) {
          // the seq of the oldest row to keep; everything older goes
          const keep = await tx
            .selectFrom('claim_refusals')
            .select('seq')
            .where('claim_id', '=', claimId)
            .orderBy('seq', 'desc')
            .offset(REFUSALS_PER_CLAIM - 1)
            .limit(1)
            .executeTakeFirst();
          if (keep)
            await tx.deleteFrom('claim_refusals').where('claim_id', '=', claimId).where('seq', '<', keep.seq).execute();
        }
      });
    } catch (err) {
      this.ctx.log.warn({ err: (err as Error).message, lost: batch.length }, 'refused-tries log: write failed');
    }
  }
}

/** The deployment's log, made on first use and flushed when the context closes. */
export function refusalLog(ctx: AppContext): RefusalLog {
  if (!ctx.services.refusals) {
    const log = new RefusalLog(ctx);
    ctx.services.refusals = log;
    ctx.onClose.push(() => log.flush());
  }
  return ctx.services.refusals;
}

export interface RefusalDoc {
  refusedAt: string;
  platformAddress: string;
  claimerAddress: string;
  instanceId: string;
  pluginId: string;
  error: string;
}

/** The claim's refused tries, newest first: for its creator or manager only. */
export async function listRefusals(
  ctx: AppContext,
  claimId: string,
  session: Session,
): Promise<{ docs: RefusalDoc[]; limit: number }> {
  const claim = await loadClaim(ctx.db, ctx, claimId, ctx.clock.now());
  if (!claim) throw notFound(`Claim ${claimId} not found`);
  if (!isCreatorOrManager(claim, session.platformAddress))
    throw forbidden(`Only the creator or manager of claim ${claimId} can read its refused tries`);
  await refusalLog(ctx).flush();
  const rows = await ctx.db
    .selectFrom('claim_refusals')
    .select(['refused_at', 'platform_address', 'claimer_address', 'instance_id', 'plugin_id', 'error'])
    .where('claim_id', '=', claimId)
    .orderBy('seq', 'desc')
    .limit(REFUSALS_PER_CLAIM)
    .execute();
  return {
    docs: rows.map((r) => ({
      refusedAt: String(r.refused_at),
      platformAddress: r.platform_address,
      claimerAddress: r.claimer_address || r.platform_address,
      instanceId: r.instance_id,
      pluginId: r.plugin_id,
      error: r.error,
    })),
    limit: REFUSALS_PER_CLAIM,
  };
}
