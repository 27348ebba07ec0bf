// Read replicas (DATABASE_REPLICA_URL): PostgreSQL streaming replicas that serve read-only work
// (claim documents and searches, attempt lists, account and collection views, a simulation's chain
// read model, eligibility: docs/scale-out.md lists them). Writes, and reads that must see the
// caller's own writes (an attempt's status right after complete), stay on the primary (`ctx.db`).
//
// Staleness bound. Every probe (every `probeMs`) reads the primary's WAL position
// (pg_current_wal_lsn) and each replica's replayed position (pg_last_wal_replay_lsn). A replica
// whose replayed position has reached the primary's position sampled at time T holds every commit
// made before T. A read may go to a replica only while `now - T <= maxLagMs`; T only moves forward
// at a probe, so a replica that stops replaying (or stops answering) leaves the rotation at most
// `maxLagMs` after its last good probe, without waiting for the next one. A read served by a
// replica therefore misses at most the commits of the last `maxLagMs` (REPLICA_MAX_LAG_MS).
//
// Consistent readers. A reader that keeps what it derived from its reads (the eligibility index:
// claims parsed and verdicts kept until the change log says they changed) must never read older
// data than it read before, or a verdict computed from an older copy would outlive the change that
// it missed. `consistentDb` is such a reader: a replica serves it only when the replica holds every
// commit made before the end of its reads on any other server (its `coveredAt` is past their end),
// so switching between replicas, or from the primary back to a replica, never goes back in time.
// One replica alone is monotonic (it replays in commit order).
//
// Down. A replica that refuses a connection or fails a probe is skipped (reads fall back to the
// primary), counted in `fallbacks` (platform_db_replica_fallbacks_total) and logged once when it
// goes down and once when it is back. A query cut short on a replica that dies under it fails like
// any lost connection (503, retry); the next read goes elsewhere.
import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import type { FastifyBaseLogger } from 'fastify';
import { pgTypes, type DB } from './index.ts';
import type { Database } from './schema.ts';
import type { AppContext } from '../context.ts';

type AppContextCaches = Pick<AppContext, 'claimCache' | 'pluginDocumentCache'>;

interface Replica {
  /** 1-based position in DATABASE_REPLICA_URL (logs and metrics name replicas by it, never by URL). */
  index: number;
  pool: pg.Pool;
  up: boolean;
  /** Time (ms) of the newest primary WAL sample this replica had replayed at its last probe. */
  coveredAt: number | null;
  probing: boolean;
}

export interface ReplicaStatus {
  index: number;
  up: boolean;
  /** How old the replica's data may be now (ms), or null before its first good probe. */
  stalenessMs: number | null;
  /** Whether reads go to it now (up and within the bound). */
  serving: boolean;
}

/** Caches of rows read from replicas, apart from the primary's (which the complete pre-check trusts). */
export interface ReplicaCaches {
  claimCache: AppContextCaches['claimCache'];
  pluginDocumentCache: AppContextCaches['pluginDocumentCache'];
}

export interface ReplicaRouter {
  /** Kysely whose connections come from a replica within the bound, else from the primary. */
  db: DB;
  /** Like `db`, and never older than what it read before (see "Consistent readers" above). */
  consistentDb: DB;
  /** The claim and plugin-document caches of replica reads (`forReads`). */
  caches: ReplicaCaches;
  maxLagMs: number;
  /** Connections handed out for reads: from a replica, or from the primary because none could serve. */
  counts: { replicaReads: number; fallbacks: number };
  status(): ReplicaStatus[];
  /** One probe round (run every probeMs; tests call it to not wait). */
  probe(): Promise<void>;
  close(): Promise<void>;
}

/** A failure of the connection rather than of the statement (the server went away, or never answered). */
function isConnectionLoss(err: unknown): boolean {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (code.startsWith('08') || /^57P0[123]$/.test(code) || /^E[A-Z]+$/.test(code)))
    return true;
  return typeof message === 'string' && /^Connection terminated|not queryable/.test(message);
}

/** A WAL position `X/Y` as a number of bytes. */
export function parseLsn(lsn: string): bigint {
  const [hi, lo] = lsn.split('/');
  return (BigInt(`0x${hi}`) << 32n) + BigInt(`0x${lo}`);
}

export function openReplicas(opts: {
  primary: pg.Pool;
  urls: string[];
  /** The primary's schema (DATABASE_URL ?schema=): the replicas hold the same one. */
  schema?: string;
  maxLagMs: number;
  /** DATABASE_POOL_SIZE: connections each replica's pool opens at most. */
  poolSize?: number;
  probeMs?: number;
  log: FastifyBaseLogger;
  now?: () => number;
}): ReplicaRouter {
  const now = opts.now ?? Date.now;
  const probeMs = opts.probeMs ?? Math.max(50, Math.min(1000, Math.floor(opts.maxLagMs / 4)));
  const replicas: Replica[] = opts.urls.map((u, i) => {
    const url = new URL(u);
    const schema = url.searchParams.get('schema') ?? opts.schema;
    url.searchParams.delete('schema');
    const pool = new pg.Pool({
      connectionString: url.toString(),
      max: opts.poolSize ?? 10,
      // a replica that does not answer must not hold a read for long: the primary takes it
      connectionTimeoutMillis: 2000,
      // the same type parsing as the primary's pool: int8 columns read as numbers on both
      types: pgTypes,
      ...(schema ? { options: `-c search_path="${schema}"` } : {}),
    });
    pool.on('connect', (client) => client.on('error', () => {}));
    pool.on('error', () => {});
    return { index: i + 1, pool, up: true, coveredAt: null, probing: false };
  });
  /** The primary's WAL position over time, oldest first: enough to cover maxLagMs. */
  const samples: Array<{ at: number; lsn: bigint }> = [];
  const counts = { replicaReads: 0, fallbacks: 0 };

  const staleness = (r: Replica, t: number) => (r.coveredAt === null ? null : t - r.coveredAt);
  const serving = (r: Replica, t: number) => {
    const s = staleness(r, t);
    return r.up && s !== null && s <= opts.maxLagMs;
  };
  const down = (r: Replica, err: unknown) => {
    if (!r.up) return;
    r.up = false;
    opts.log.warn(
      { replica: r.index, err: (err as Error)?.message },
      'read replica down: its reads fall back to the primary',
    );
  };
  const back = (r: Replica) => {
    if (r.up) return;
    r.up = true;
    opts.log.info({ replica: r.index }, 'read replica back: it serves reads again');
  };

  let turn = 0;
  const routing = {
    async connect(): Promise<pg.PoolClient> {
      const t = now();
      for (let k = 0; k < replicas.length; k++) {
        const r = replicas[(turn + k) % replicas.length];
        if (!serving(r, t)) continue;
        try {
          const client = await r.pool.connect();
          turn = (r.index % replicas.length) as number;
          counts.replicaReads++;
          return onReplica(r, client);
        } catch (err) {
          down(r, err);
        }
      }
      counts.fallbacks++;
      return opts.primary.connect();
    },
    async end(): Promise<void> {},
  };
  /**
   * A replica connection whose statements move to the primary when the replica is lost under them
   * (a pooled connection to a server that just went away fails its next statement): read-only work
   * is safe to run again. Cursors (streaming reads) pass through as they are.
   */
  const onReplica = (r: Replica, client: pg.PoolClient, ended: (source: number) => void = () => {}): pg.PoolClient => {
    const query = (...args: unknown[]): unknown => {
      const first = (client.query as (...a: unknown[]) => unknown)(...args);
      if (!(first instanceof Promise)) return first;
      return first.catch(async (err: unknown) => {
        if (!isConnectionLoss(err)) throw err;
        down(r, err);
        counts.fallbacks++;
        const p = await opts.primary.connect();
        try {
          return await (p.query as (...a: unknown[]) => unknown)(...args);
        } finally {
          p.release();
          ended(0);
        }
      });
    };
    return {
      query,
      release: (err?: Error | boolean) => {
        ended(r.index);
        client.release(err);
      },
    } as unknown as pg.PoolClient;
  };

  /**
   * The consistent reader's connections. `endedAt` holds, per server (0: the primary), when its
   * last read on it ended; a replica serves it only when it holds every commit made before the
   * reads on the other servers ended. The replica it used last is tried first (it needs no check).
   */
  const endedAt = new Map<number, number>();
  let lastSource = -1;
  const ended = (source: number) => {
    const t = now();
    if ((endedAt.get(source) ?? Number.NEGATIVE_INFINITY) < t) endedAt.set(source, t);
  };
  const floorFor = (source: number) => {
    let f = Number.NEGATIVE_INFINITY;
    for (const [s, t] of endedAt) if (s !== source && t > f) f = t;
    return f;
  };
  const consistentRouting = {
    async connect(): Promise<pg.PoolClient> {
      const t = now();
      const order = [...replicas].sort((a, b) => (a.index === lastSource ? -1 : b.index === lastSource ? 1 : 0));
      for (const r of order) {
        if (!serving(r, t) || (r.coveredAt as number) < floorFor(r.index)) continue;
        try {
          const client = await r.pool.connect();
          lastSource = r.index;
          counts.replicaReads++;
          return onReplica(r, client, ended);
        } catch (err) {
          down(r, err);
        }
      }
      counts.fallbacks++;
      const client = await opts.primary.connect();
      lastSource = 0;
      return {
        query: (...args: unknown[]) => (client.query as (...a: unknown[]) => unknown)(...args),
        release: (err?: Error | boolean) => {
          ended(0);
          client.release(err);
        },
      } as unknown as pg.PoolClient;
    },
    async end(): Promise<void> {},
  };

  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: routing as unknown as pg.Pool }),
  });
  const consistentDb = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: consistentRouting as unknown as pg.Pool }),
  });

  async function probe(): Promise<void> {
    let primaryLsn: bigint;
    // the time is taken before the position is read: every commit made before `at` is within it
    const at = now();
    try {
      const r = await opts.primary.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn');
      primaryLsn = parseLsn(r.rows[0].lsn);
    } catch {
      return; // the primary is out of reach: nothing to compare against this time
    }
    samples.push({ at, lsn: primaryLsn });
    // a probe run by hand (tests) may overlap the loop's: keep the samples in time order
    if (samples.length > 1 && samples[samples.length - 2].at > at) samples.sort((a, b) => a.at - b.at);
    // keep what can still matter: samples within the bound, and the newest one before it
    while (samples.length > 2 && samples[1].at < at - opts.maxLagMs) samples.shift();
    await Promise.all(
      replicas.map(async (r) => {
        if (r.probing) return;
        r.probing = true;
        try {
          const res = await r.pool.query<{ lsn: string | null }>('select pg_last_wal_replay_lsn()::text as lsn');
          const replayed = res.rows[0].lsn;
          // not a standby (no replay position): it holds whatever it holds, so it is treated as current
          const lsn = replayed === null ? primaryLsn : parseLsn(replayed);
          for (let i = samples.length - 1; i >= 0; i--) {
            if (samples[i].lsn <= lsn) {
              if (r.coveredAt === null || samples[i].at > r.coveredAt) r.coveredAt = samples[i].at;
              break;
            }
          }
          back(r);
        } catch (err) {
          down(r, err);
        } finally {
          r.probing = false;
        }
      }),
    );
  }

  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const loop = () => {
    if (stopped) return;
    probe().finally(() => {
      if (!stopped) timer = setTimeout(loop, probeMs).unref();
    });
  };
  loop();

  return {
    db,
    consistentDb,
    caches: { claimCache: new Map(), pluginDocumentCache: new Map() },
    maxLagMs: opts.maxLagMs,
    counts,
    probe,
    status() {
      const t = now();
      return replicas.map((r) => ({
        index: r.index,
        up: r.up,
        stalenessMs: staleness(r, t),
        serving: serving(r, t),
      }));
    },
    async close() {
      stopped = true;
      clearTimeout(timer);
      await Promise.all(replicas.map((r) => r.pool.end().catch(() => {})));
    },
  };
}

/**
 * The context for read-only work: its `db` reads from a replica within the staleness bound (or the
 * primary when none can serve). Without replicas, the context itself. Never for a read that must
 * see the caller's own writes, and never for a write. Claims and plugin documents it reads are
 * cached apart from the primary's (the complete pre-check trusts those for 500 ms: a replica's older
 * copy there would refuse a complete of the version the caller just wrote).
 */
export function forReads<C extends { db: DB; replicas?: ReplicaRouter }>(ctx: C): C {
  return ctx.replicas ? { ...ctx, db: ctx.replicas.db, ...ctx.replicas.caches } : ctx;
}

/**
 * Like `forReads`, for a reader that keeps state derived from its reads and must never read older
 * data than before (the eligibility index and its answers): `consistentDb` (see "Consistent readers").
 */
export function forConsistentReads<C extends { db: DB; replicas?: ReplicaRouter }>(ctx: C): C {
  return ctx.replicas ? { ...ctx, db: ctx.replicas.consistentDb, ...ctx.replicas.caches } : ctx;
}
