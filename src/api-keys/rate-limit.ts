// Rate limits per API key and per client IP, in fixed one-minute windows.
//
// Where the count lives (RATE_LIMIT_STORE):
// - `database` (default on PostgreSQL): every process sharing the database draws from one budget
//   per bucket and window, a row of `rate_limit_windows` raised with one upsert;
// - `memory` (default on SQLite): per process.
//
// To keep the hot path cheap, a process does not go to the database for every request: it takes a
// lease of `block` requests at a time (one upsert adds `block` to the window's row and returns the
// new total) and admits requests from its lease synchronously until it is used up. The part of a
// lease beyond the limit is never admitted, so the processes together never admit more than the
// limit. The block is 1 (exact) for limits up to 100 a minute and grows to 1 % of the limit above
// that, at most 100. From a block of 4 up, the next lease is taken ahead, when a quarter of the
// current one is left, so requests do not wait for it. A lease left unused in an idle process is
// budget the others cannot use: at most (processes − 1) × (block + block / 4 − 1) requests per window.
//
// Through Kysely (PostgreSQL), the leases asked for in one event-loop turn, by every limiter of the
// process (the per-key and the per-IP one, whose blocks run out on the same request), are one
// statement: one multi-row upsert, the increments of one bucket added together. With a block of 1,
// the requests of a burst thus share a statement instead of taking one each.
import ipaddr from 'ipaddr.js';
import { CompiledQuery } from 'kysely';
import type { AppContext } from '../context.ts';
import { TurnBatcher } from '../shared/turn-batcher.ts';

const WINDOW_MS = 60_000;
const MAX_TRACKED_BUCKETS = 100_000;

/** Seconds until the current window ends: the request's Retry-After. */
export type Verdict = null | { retryAfter: number };

interface Lease {
  window: number;
  /** Requests this process may still admit from what it leased in this window. */
  left: number;
  /** The window's budget is spent (no further lease can hold anything). */
  spent: boolean;
  pending: Promise<void> | null;
}

/** Adds `amount` to the bucket's count for the window; returns the new total. */
type Take = (bucket: string, window: number, amount: number) => number | Promise<number>;

export interface TakeRequest {
  bucket: string;
  window: number;
  amount: number;
  resolve(total: number): void;
  reject(err: unknown): void;
}

const upsertSql = (dialect: AppContext['dialect'], rows: number): string => {
  let n = 0;
  const p = () => (dialect === 'postgres' ? `$${++n}` : '?');
  const values = Array.from({ length: rows }, () => `(${p()}, ${p()}, ${p()})`).join(', ');
  return (
    `insert into rate_limit_windows (bucket, window_start, taken) values ${values} ` +
    'on conflict (bucket, window_start) do update set taken = rate_limit_windows.taken + excluded.taken ' +
    'returning bucket, window_start, taken'
  );
};

/** One upsert for the takes asked for in one turn; each caller gets the total as if it had run alone, in order. */
function flushTakes(ctx: AppContext, items: TakeRequest[]): void {
  const rows = new Map<string, { bucket: string; window: number; amount: number; items: TakeRequest[] }>();
  for (const item of items) {
    const key = `${item.window} ${item.bucket}`;
    let row = rows.get(key);
    if (!row) rows.set(key, (row = { bucket: item.bucket, window: item.window, amount: 0, items: [] }));
    row.amount += item.amount;
    row.items.push(item);
  }
  // rows in key order: concurrent statements of several processes lock them in the same order
  const ordered = [...rows.values()].sort((x, y) =>
    x.window !== y.window ? x.window - y.window : x.bucket < y.bucket ? -1 : x.bucket > y.bucket ? 1 : 0,
  );
  const query = CompiledQuery.raw(
    upsertSql(ctx.dialect, ordered.length),
    ordered.flatMap((r) => [r.bucket, r.window, r.amount]),
  );
  ctx.db.executeQuery<{ bucket: string; window_start: number | string; taken: number | string }>(query).then(
    (result) => {
      for (const got of result.rows) {
        const row = rows.get(`${Number(got.window_start)} ${got.bucket}`);
        if (!row) continue;
        let total = Number(got.taken) - row.amount;
        for (const item of row.items) item.resolve((total += item.amount));
        rows.delete(`${row.window} ${row.bucket}`);
      }
      for (const row of rows.values())
        for (const item of row.items) item.reject(new Error('rate limit: no row returned'));
    },
    (err) => {
      for (const item of items) item.reject(err);
    },
  );
}

/** The one-row upsert SQLite runs synchronously on every take: built once, not per request. */
const UPSERT_ONE_SQLITE = upsertSql('sqlite', 1);

function databaseTake(ctx: AppContext): Take {
  // one batcher per context, shared by all its limiters
  const batcher = (ctx.services.rateLimitTakes ??= new TurnBatcher<TakeRequest>((items) => flushTakes(ctx, items)));
  return (bucket, window, amount) => {
    if (ctx.sqlite) {
      // SQLite: synchronous when Kysely does not hold the connection (no batching needed)
      const fast = ctx.sqlite.run<{ taken: number | string }>(
        CompiledQuery.raw(UPSERT_ONE_SQLITE, [bucket, window, amount]),
      );
      if (fast) return Number(fast.rows[0].taken);
    }
    return new Promise<number>((resolve, reject) => batcher.add({ bucket, window, amount, resolve, reject }));
  };
}

function memoryTake(): Take {
  let window = 0;
  let totals = new Map<string, number>();
  return (bucket, w, amount) => {
    if (w !== window) {
      window = w;
      totals = new Map();
    }
    const total = (totals.get(bucket) ?? 0) + amount;
    totals.set(bucket, total);
    return total;
  };
}

export interface RateLimiter {
  /** Counts one request against the bucket: null when admitted, else when to retry. */
  take(bucket: string): Verdict | Promise<Verdict>;
}

export function createRateLimiter(ctx: AppContext, perMinute: number): RateLimiter {
  const shared = ctx.config.rateLimitStore === 'database';
  const takeFromStore = shared ? databaseTake(ctx) : memoryTake();
  const block = perMinute <= 100 ? 1 : Math.min(1000, Math.floor(perMinute / 100));
  // the next lease is taken when this many of the current one are left (0: only once it is used up)
  const ahead = block >= 4 ? Math.floor(block / 4) : 0;
  let leases = new Map<string, Lease>();
  let currentWindow = 0;

  const newWindow = (w: number) => {
    currentWindow = w;
    leases = new Map();
    // past windows' rows are of no use: whichever process sees the turn first deletes them
    if (shared) {
      ctx.db
        .deleteFrom('rate_limit_windows')
        .where('window_start', '<', w)
        .execute()
        .catch((err) => ctx.log.warn({ err }, 'rate limit: cleanup of past windows failed'));
    }
  };

  const lease = (bucket: string, l: Lease): Promise<void> | void => {
    const absorb = (total: number) => {
      const before = total - block;
      const admissible = Math.max(0, Math.min(block, perMinute - before));
      l.left += admissible;
      if (admissible < block) l.spent = true;
    };
    let total: number | Promise<number>;
    try {
      total = takeFromStore(bucket, l.window, block);
    } catch (err) {
      return failOpen(l, err);
    }
    if (typeof total === 'number') return absorb(total);
    return total.then(absorb, (err) => failOpen(l, err));
  };

  // A store failure must not take the service down with it: admit, and say so in the log.
  const failOpen = (l: Lease, err: unknown) => {
    ctx.log.warn({ err }, 'rate limit: the shared count could not be updated; admitting');
    l.left += 1;
  };

  const verdict = (l: Lease, now: number): Verdict => {
    if (l.left > 0) {
      l.left--;
      return null;
    }
    return { retryAfter: Math.max(1, Math.ceil((l.window + WINDOW_MS - now) / 1000)) };
  };

  /** Starts a lease; the returned promise (null when it completed synchronously) settles with it. */
  const startLease = (bucket: string, l: Lease): Promise<void> | null => {
    const leased = lease(bucket, l);
    if (!leased) return null;
    const promise: Promise<void> = leased.finally(() => {
      if (l.pending === promise) l.pending = null;
    });
    return (l.pending = promise);
  };

  const take = (bucket: string): Verdict | Promise<Verdict> => {
    const now = ctx.clock.now();
    const w = now - (now % WINDOW_MS);
    if (w !== currentWindow) newWindow(w);
    let l = leases.get(bucket);
    if (!l) {
      if (leases.size >= MAX_TRACKED_BUCKETS) leases.clear(); // bounded memory under many IPs
      leases.set(bucket, (l = { window: w, left: 0, spent: false, pending: null }));
    }
    if (l.left > 0) {
      l.left--;
      // the next lease ahead of need, so that the requests after this one do not wait for it
      if (l.left === ahead && ahead > 0 && !l.spent && !l.pending) startLease(bucket, l);
      return null;
    }
    if (l.spent) return verdict(l, now);
    // with blocks, wait for a lease already on its way, then look again (others may use it up);
    // a block of 1 is this request's own: take it now (one turn's takes share a statement)
    if (l.pending && block > 1) return l.pending.then(() => take(bucket));
    const leased = startLease(bucket, l);
    if (!leased) return verdict(l, now);
    const lease_ = l;
    return leased.then(() => verdict(lease_, ctx.clock.now()));
  };

  return { take };
}

const ipBuckets = new Map<string, string>();

/** The bucket of a client address: the address itself for IPv4, its /64 for IPv6 (one host's usual allocation). */
export function ipBucket(ip: string): string {
  // parsing costs microseconds; clients repeat
  let bucket = ipBuckets.get(ip);
  if (bucket === undefined) {
    if (ipBuckets.size >= 10_000) ipBuckets.clear();
    ipBuckets.set(ip, (bucket = parseIpBucket(ip)));
  }
  return bucket;
}

function parseIpBucket(ip: string): string {
  try {
    let addr = ipaddr.parse(ip);
    if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress())
      addr = (addr as ipaddr.IPv6).toIPv4Address();
    if (addr.kind() === 'ipv4') return `ip:${addr.toString()}`;
    const parts = (addr as ipaddr.IPv6).parts.slice(0, 4).map((p) => p.toString(16));
    return `ip:${parts.join(':')}::/64`;
  } catch {
    return `ip:${ip}`;
  }
}
