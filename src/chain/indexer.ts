// The block-following indexer. For each block from the cursor on:
//   1. read the block and the results of its txs (read-block.ts);
//   2. from the token module's EVENTS of each successful tx, collect what it touched (events.ts);
//   3. re-read all of that from the chain itself, pinned to the block (`x-cosmos-block-height`):
//      balance stores, collection documents, trackers. The chain's transfer rules are never re-run;
//   4. commit the block's activity, documents and the cursor in one transaction (storage.ts).
// Catching up, a window of blocks is read ahead (their reads are pinned, so independent) while the
// oldest commits; blocks commit in order. One process indexes at a time, holding a lease row that it renews; if it
// dies, another takes over when the lease expires. Failed txs (code ≠ 0) are ignored.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { AppContext } from '../context.ts';
import { startPollLoop } from '../shared/poll-loop.ts';
import { ChainError, type ChainClient } from './client.ts';
import type { BlockWork } from './model.ts';
import { limiter, readBlock } from './read-block.ts';
import {
  acquireLease,
  commitBlock,
  FencedError,
  knownCollections,
  readIndexState,
  releaseLease,
  renewLease,
} from './storage.ts';

export interface IndexerOptions {
  startHeight: number;
  pollIntervalMs: number;
  batchSize: number;
  leaseMs: number;
  /** Concurrent chain reads while catching up. */
  concurrency?: number;
}

export interface IndexerStats {
  blocks: number;
  txs: number;
  transfers: number;
  /** Time the committer sat waiting for a block's chain reads (the indexer's wait on the chain). */
  waitMs: number;
  commitMs: number;
}

export class ChainIndexer {
  readonly holder = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  readonly stats: IndexerStats = { blocks: 0, txs: 0, transfers: 0, waitMs: 0, commitMs: 0 };
  private readonly ctx: AppContext;
  private readonly client: ChainClient;
  private readonly opts: IndexerOptions;
  private readonly known = new Set<string>();
  private readonly abort = new AbortController();
  private holding = false;
  private lastError = '';

  constructor(ctx: AppContext, client: ChainClient, opts: IndexerOptions) {
    this.ctx = ctx;
    this.client = client;
    this.opts = opts;
  }

  private now(): number {
    return Date.now(); // the lease is shared between processes: wall time, not a test clock
  }

  private async isKnown(ids: string[]): Promise<Set<string>> {
    const unknown = ids.filter((id) => !this.known.has(id));
    if (unknown.length) for (const id of await knownCollections(this.ctx.db, unknown)) this.known.add(id);
    return new Set(ids.filter((id) => this.known.has(id)));
  }

  /** Takes or renews the lease; false while another live process holds it. */
  async ensureLease(): Promise<boolean> {
    const got = await acquireLease(this.ctx.db, this.holder, this.now(), this.opts.leaseMs, this.opts.startHeight);
    if (got && !this.holding) {
      this.known.clear(); // whatever happened while we did not hold it (an import) is re-read
      this.ctx.log.info({ holder: this.holder }, 'chain indexer: holding the indexing lease');
    }
    this.holding = got;
    return got;
  }

  /**
   * Indexes up to one batch of blocks (reads ahead concurrently, commits in order). Returns the
   * number of blocks committed; 0 when caught up.
   */
  async step(): Promise<number> {
    const state = await readIndexState(this.ctx.db);
    const latest = (await this.client.latestBlock({ fresh: true })).height;
    if (!(await renewLease(this.ctx.db, this.holder, this.now(), this.opts.leaseMs, latest))) {
      this.holding = false;
      return 0;
    }
    const from = (state?.height ?? this.opts.startHeight - 1) + 1;
    if (from > latest) return 0;
    // A window of `batchSize` blocks is read ahead while the oldest one commits, so the chain
    // reads never stall behind the commits; one step covers at most 10 windows, then the chain
    // head and the cursor are re-read.
    const to = Math.min(latest, from + this.opts.batchSize * 10 - 1);
    const run = limiter(this.opts.concurrency ?? 16);
    const window: Promise<BlockWork>[] = [];
    let next = from;
    const readAhead = () => {
      while (next <= to && window.length < this.opts.batchSize) {
        const p = readBlock(this.client, next++, (ids) => this.isKnown(ids), run);
        p.catch(() => {}); // awaited in order below; a later block failing first must not go unhandled
        window.push(p);
      }
    };
    readAhead();
    let done = 0;
    while (window.length && !this.abort.signal.aborted) {
      const waitStarted = performance.now();
      const work = await window.shift()!;
      const started = performance.now();
      this.stats.waitMs += started - waitStarted;
      readAhead();
      await commitBlock(this.ctx.db, work, this.holder, this.now(), this.opts.leaseMs);
      this.stats.commitMs += performance.now() - started;
      for (const c of work.collections)
        if (c.doc) this.known.add(c.collectionId);
        else this.known.delete(c.collectionId);
      this.stats.blocks++;
      this.stats.txs += work.txs;
      this.stats.transfers += work.activity.length;
      done++;
    }
    return done;
  }

  /** Index until caught up (benchmarks, tests, `platform indexer --once`). */
  async catchUp(): Promise<number> {
    let total = 0;
    if (!(await this.ensureLease())) return 0;
    for (;;) {
      const n = await this.step();
      if (n === 0) return total;
      total += n;
    }
  }

  /** The background loop: lease, catch up in batches, then poll; errors back off and retry. */
  start(): { stop(): Promise<void> } {
    let backoff = this.opts.pollIntervalMs;
    const heartbeat = setInterval(
      () => {
        if (this.holding)
          void renewLease(this.ctx.db, this.holder, this.now(), this.opts.leaseMs)
            .then((ok) => (this.holding = ok))
            .catch(() => {});
      },
      Math.max(100, Math.floor(this.opts.leaseMs / 3)),
    );
    heartbeat.unref();
    const loop = startPollLoop({
      round: async () => {
        if (!(await this.ensureLease()))
          return Math.min(this.opts.pollIntervalMs, Math.max(100, Math.floor(this.opts.leaseMs / 3)));
        const n = await this.step();
        if (this.lastError) this.ctx.log.info('chain indexer: recovered');
        this.lastError = '';
        backoff = this.opts.pollIntervalMs;
        return n === 0 ? this.opts.pollIntervalMs : 0;
      },
      onError: (err) => {
        const message = (err as Error).message;
        if (err instanceof FencedError) {
          this.holding = false;
          this.ctx.log.warn({ err: message }, 'chain indexer: another indexer moved the cursor; re-reading it');
          return 0;
        }
        // one log line per distinct failure, not one per retry
        if (message !== this.lastError)
          this.ctx.log[err instanceof ChainError ? 'warn' : 'error'](
            { err: message },
            'chain indexer: block not indexed; retrying',
          );
        this.lastError = message;
        const wait = backoff;
        backoff = Math.min(backoff * 2, 60_000);
        return wait;
      },
    });
    // a catch-up batch in flight stops between blocks
    loop.signal.addEventListener('abort', () => this.abort.abort(), { once: true });
    return {
      stop: async () => {
        clearInterval(heartbeat);
        await loop.stop();
        // hand over at once instead of after the lease expires
        await releaseLease(this.ctx.db, this.holder).catch(() => {});
      },
    };
  }
}
