// The block-following indexer. For each block from the cursor on:
//   1. read the block (its raw txs give the order) and the results of its txs (tx search);
//   2. from the token module's EVENTS of each successful tx (never the message bodies: tokens also
//      move inside swaps, IBC hooks and contract calls, and a message may say collection "0"),
//      collect the transfer legs (`usedApprovalDetails`), the collections and balance stores the
//      messages touched (`indexer` events), and the amount / challenge trackers that moved;
//   3. re-read all of that from the chain itself, pinned to the block (`x-cosmos-block-height`):
//      balance stores, collection documents, trackers. The chain's transfer rules are never re-run;
//   4. commit the block's activity, documents and the cursor in one transaction (storage.ts).
// Catching up, several blocks are read concurrently (their reads are pinned, so independent) and
// committed in order. One process indexes at a time, holding a lease row that it renews; if it
// dies, another takes over when the lease expires. Failed txs (code ≠ 0) are ignored.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { AppContext } from '../context.ts';
import { tryCanonical } from '../shared/addresses.ts';
import { ChainError, isChainNotFound, type AmountTrackerKey, type ChainClient, type ChallengeTrackerKey, type EventJson, type TxResult } from './client.ts';
import {
  activityDocId,
  amountTrackerDocId,
  challengeTrackerDocId,
  type ActivityRecord,
  type AmountTrackerRecord,
  type BalanceRecord,
  type BlockWork,
  type ChallengeRecord,
  type CollectionRecord,
} from './model.ts';
import { acquireLease, commitBlock, FencedError, knownCollections, readIndexState, releaseLease, renewLease } from './storage.ts';

/** `msg_type`s that change one user's balance store (approvals, auto-approve flags), not the collection. */
const USER_LEVEL_MSGS = new Set([
  'update_user_approvals',
  'set_incoming_approval',
  'delete_incoming_approval',
  'set_outgoing_approval',
  'delete_outgoing_approval',
  'purge_approvals',
]);
/** `msg_type`s with a collectionId that change neither the collection nor a balance store by themselves. */
const NO_COLLECTION_STATE_MSGS = new Set(['transfer_tokens', 'cast_vote']);

/** Runs `fn` with at most `n` in flight (shared by all blocks of a batch). */
export function limiter(n: number): <T>(fn: () => Promise<T>) => Promise<T> {
  let active = 0;
  const queue: (() => void)[] = [];
  return async <T>(fn: () => Promise<T>): Promise<T> => {
    if (active >= n) await new Promise<void>((r) => queue.push(r));
    active++;
    try {
      return await fn();
    } finally {
      active--;
      queue.shift()?.();
    }
  };
}

const attrMap = (e: EventJson): Map<string, string> => new Map(e.attributes.map((a) => [a.key, a.value]));

function parseJsonAttr(value: string | undefined): unknown {
  if (value === undefined || value === '') return undefined;
  try {
    return JSON.parse(value);
  } catch {
    return undefined;
  }
}

/** Keeper structs without json tags come capitalised (note §4.2); the documents use camelCase. */
function lowerKeys(list: unknown): unknown[] | undefined {
  if (!Array.isArray(list)) return undefined;
  return list.map((item) => (typeof item === 'object' && item !== null ? Object.fromEntries(Object.entries(item).map(([k, v]) => [k[0].toLowerCase() + k.slice(1), v])) : item));
}

/** A numTransfers attribute is a JSON string (`"\"3\""`); tolerate a bare one. */
const unquote = (v: string | undefined): string => {
  const parsed = parseJsonAttr(v);
  return typeof parsed === 'string' ? parsed : (v ?? '');
};

/** What one block's successful transactions touched, from their events alone. */
export interface Touched {
  activity: ActivityRecord[];
  /** `${collectionId}\n${address}` → tx hash of the last tx touching it. */
  balances: Map<string, string>;
  /** collectionId → tx hash, for collections whose document a message changed. */
  collections: Map<string, string>;
  /** Every collection mentioned (new ones get their document read even on a plain transfer). */
  mentioned: Set<string>;
  amountTrackers: Map<string, AmountTrackerKey>;
  challenges: Map<string, { key: ChallengeTrackerKey; leaves: { leafIndex: string; usedBy: string }[] }>;
  failedTxs: number;
}

export function collectTouched(height: number, time: number, results: TxResult[]): Touched {
  const t: Touched = { activity: [], balances: new Map(), collections: new Map(), mentioned: new Set(), amountTrackers: new Map(), challenges: new Map(), failedTxs: 0 };
  const touchBalance = (collectionId: string, address: string, txHash: string) => {
    const native = tryCanonical(address);
    if (native) t.balances.set(`${collectionId}\n${native}`, txHash); // Mint / Total / foreign forms have no owner document
  };
  for (const r of results) {
    if (r.code !== 0) {
      t.failedTxs++;
      continue;
    }
    let leg = 0;
    for (const e of r.events) {
      const a = attrMap(e);
      const collectionId = a.get('collectionId');
      if (e.type === 'usedApprovalDetails' && collectionId) {
        const from = a.get('from') ?? '';
        const to = a.get('to') ?? '';
        t.mentioned.add(collectionId);
        if (from !== 'Mint') touchBalance(collectionId, from, r.hash);
        touchBalance(collectionId, to, r.hash);
        const parties = [...new Set([from, to].map((x) => tryCanonical(x)).filter((x): x is string => x !== null))];
        const legIndex = leg++;
        const docId = activityDocId(collectionId, height, r.index, legIndex);
        const coinTransfers = lowerKeys(parseJsonAttr(a.get('coinTransfers')));
        const approvalsUsed = lowerKeys(parseJsonAttr(a.get('approvalsUsed')));
        const balances = parseJsonAttr(a.get('balances'));
        t.activity.push({
          docId,
          collectionId,
          txIndex: r.index,
          legIndex,
          parties,
          doc: {
            _docId: docId,
            collectionId,
            from,
            to: [to],
            initiatedBy: a.get('initiatedBy') ?? '',
            balances: Array.isArray(balances) ? balances : [],
            timestamp: String(time),
            block: String(height),
            txHash: r.hash,
            memo: r.memo,
            ...(coinTransfers ? { coinTransfers } : {}),
            ...(approvalsUsed ? { approvalsUsed } : {}),
          },
        });
        continue;
      }
      if (e.type === 'indexer') {
        const msgType = a.get('msg_type') ?? '';
        if (!collectionId) continue; // create_collection: its nested universal_update_collection event names the id
        t.mentioned.add(collectionId);
        if (USER_LEVEL_MSGS.has(msgType)) {
          const msg = parseJsonAttr(a.get('msg')) as { approverAddress?: unknown } | undefined;
          const who = typeof msg?.approverAddress === 'string' && msg.approverAddress ? msg.approverAddress : (a.get('sender') ?? '');
          touchBalance(collectionId, who, r.hash);
        } else if (!NO_COLLECTION_STATE_MSGS.has(msgType)) {
          t.collections.set(collectionId, r.hash);
        }
        continue;
      }
      if (a.has('amountTrackerId') && collectionId) {
        const key: AmountTrackerKey = {
          collectionId,
          approvalLevel: a.get('approvalLevel') ?? '',
          approverAddress: a.get('approverAddress') ?? '',
          approvalId: a.get('approvalId') ?? '',
          amountTrackerId: a.get('amountTrackerId') ?? '',
          trackerType: a.get('trackerType') ?? '',
          approvedAddress: a.get('approvedAddress') ?? '',
        };
        t.amountTrackers.set(amountTrackerDocId(key), key);
        continue;
      }
      if (a.has('challengeTrackerId') && a.has('leafIndex') && collectionId) {
        const key: ChallengeTrackerKey = {
          collectionId,
          approvalLevel: a.get('approvalLevel') ?? '',
          approverAddress: a.get('approverAddress') ?? '',
          approvalId: a.get('approvalId') ?? '',
          challengeTrackerId: a.get('challengeTrackerId') ?? '',
        };
        const docId = challengeTrackerDocId(key);
        const entry = t.challenges.get(docId) ?? { key, leaves: [] };
        entry.leaves.push({ leafIndex: a.get('leafIndex') ?? '', usedBy: a.get('creator') ?? '' });
        t.challenges.set(docId, entry);
      }
    }
  }
  return t;
}

/** Reads one block and the chain state it touched, pinned to its height. Nothing is written. */
export async function readBlock(client: ChainClient, height: number, isKnown: (ids: string[]) => Promise<Set<string>>, run: <T>(fn: () => Promise<T>) => Promise<T>): Promise<BlockWork> {
  const block = await run(() => client.block(height));
  const results = await run(() => client.blockResults(height, block.txs));
  const touched = collectTouched(height, block.time, results);
  const pinned = { height };

  // collection documents: those a message changed, and those the read model has never seen
  const known = await isKnown([...touched.mentioned]);
  const toRead = new Map(touched.collections);
  for (const id of touched.mentioned) {
    if (!known.has(id) && !toRead.has(id)) {
      const tx = touched.activity.find((a) => a.collectionId === id)?.doc.txHash;
      toRead.set(id, typeof tx === 'string' ? tx : '');
    }
  }
  const collections: CollectionRecord[] = await Promise.all(
    [...toRead].map(async ([collectionId, txHash]) => ({ collectionId, txHash, doc: await run(() => client.collection(collectionId, pinned)) })),
  );
  const gone = new Set(collections.filter((c) => c.doc === null).map((c) => c.collectionId));

  const balances: BalanceRecord[] = [];
  await Promise.all(
    [...touched.balances].map(async ([k, txHash]) => {
      const [collectionId, address] = k.split('\n');
      if (gone.has(collectionId)) return;
      try {
        balances.push({ collectionId, address, txHash, store: await run(() => client.balance(collectionId, address, pinned)) });
      } catch (err) {
        // the collection vanished in this block without a message we recognise: confirm, then purge it
        if (isChainNotFound(err) && (await run(() => client.collection(collectionId, pinned))) === null) {
          if (!gone.has(collectionId)) {
            gone.add(collectionId);
            collections.push({ collectionId, txHash, doc: null });
          }
          return;
        }
        throw err;
      }
    }),
  );
  // deterministic order (concurrent reads finish in any order)
  balances.sort((a, b) => (a.collectionId + a.address < b.collectionId + b.address ? -1 : 1));

  const amountTrackers: AmountTrackerRecord[] = [];
  await Promise.all(
    [...touched.amountTrackers].map(async ([docId, key]) => {
      if (gone.has(key.collectionId)) return;
      const tracker = await run(() => client.approvalTracker(key, pinned));
      if (tracker) amountTrackers.push({ key, docId, tracker });
    }),
  );
  const challenges: ChallengeRecord[] = [];
  await Promise.all(
    [...touched.challenges].map(async ([docId, c]) => {
      if (gone.has(c.key.collectionId)) return;
      const used = await Promise.all(c.leaves.map(async (leaf) => ((await run(() => client.challengeTracker(c.key, leaf.leafIndex, pinned))) !== '0' ? leaf : null)));
      const leaves = used.filter((l): l is { leafIndex: string; usedBy: string } => l !== null);
      if (leaves.length) challenges.push({ key: c.key, docId, leaves });
    }),
  );

  return {
    height,
    time: block.time,
    activity: touched.activity,
    balances,
    collections,
    amountTrackers,
    challenges,
    txs: results.length,
    failedTxs: touched.failedTxs,
  };
}

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

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });

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
    const latest = (await this.client.latestBlock()).height;
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
      for (const c of work.collections) if (c.doc) this.known.add(c.collectionId);
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
    const signal = this.abort.signal;
    let backoff = this.opts.pollIntervalMs;
    const heartbeat = setInterval(() => {
      if (this.holding) void renewLease(this.ctx.db, this.holder, this.now(), this.opts.leaseMs).then((ok) => (this.holding = ok)).catch(() => {});
    }, Math.max(100, Math.floor(this.opts.leaseMs / 3)));
    heartbeat.unref();
    const loop = (async () => {
      while (!signal.aborted) {
        try {
          if (!(await this.ensureLease())) {
            await sleep(Math.min(this.opts.pollIntervalMs, Math.max(100, Math.floor(this.opts.leaseMs / 3))), signal);
            continue;
          }
          const n = await this.step();
          if (this.lastError) this.ctx.log.info('chain indexer: recovered');
          this.lastError = '';
          backoff = this.opts.pollIntervalMs;
          if (n === 0) await sleep(this.opts.pollIntervalMs, signal);
        } catch (err) {
          if (signal.aborted) break;
          const message = (err as Error).message;
          if (err instanceof FencedError) {
            this.holding = false;
            this.ctx.log.warn({ err: message }, 'chain indexer: another indexer moved the cursor; re-reading it');
            continue;
          }
          // one log line per distinct failure, not one per retry
          if (message !== this.lastError) this.ctx.log[err instanceof ChainError ? 'warn' : 'error']({ err: message }, 'chain indexer: block not indexed; retrying');
          this.lastError = message;
          await sleep(backoff, signal);
          backoff = Math.min(backoff * 2, 60_000);
        }
      }
    })();
    return {
      stop: async () => {
        this.abort.abort();
        clearInterval(heartbeat);
        await loop;
        // hand over at once instead of after the lease expires
        await releaseLease(this.ctx.db, this.holder).catch(() => {});
      },
    };
  }
}
