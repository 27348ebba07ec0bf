// Waking the claim queue's worker (queue.ts) when attempts are queued. An enqueue in the process
// that runs the worker wakes it at once; other processes are told by a PostgreSQL NOTIFY on the
// schema's channel, which their worker LISTENs to. The NOTIFY is part of the accepting insert's own
// statement (attempts.ts), so it costs no transaction of its own: PostgreSQL delivers it when that
// transaction commits, so a listener never wakes before the rows are visible, an insert that rolls
// back wakes nobody, and one insert (one turn's accepted attempts) sends one notification however
// many attempts it holds. Polling is the fallback (and, on SQLite, the only way).
// The hub also wakes requests of this process that wait for a keyed event (`waitForWake`): the
// guess throttle's wait for an address's verdicts (guess-throttle.ts), woken when one settles here,
// with a poll (shared/poll-loop.ts) as the fallback for what other processes settle.
import pg from 'pg';
import type { AppContext } from '../context.ts';
import { wakeableWait } from '../shared/poll-loop.ts';

interface Wakeable {
  wake(): void;
}

/** One per context (AppContext.claimQueueWake): the worker of this process, the channel, and keyed waiters. */
export interface WakeHub {
  worker: Wakeable | null;
  /** PostgreSQL: the schema's notification channel (null on SQLite). */
  channel: string | null;
  /** Requests of this process waiting by key (`waitForWake`), oldest first. */
  waiters: Map<string, Array<() => void>>;
}

export function createWakeHub(ctx: Pick<AppContext, 'config'>): WakeHub {
  return { worker: null, channel: ctx.config.databaseUrl ? channelOf(ctx) : null, waiters: new Map() };
}

/** PostgreSQL notification channel, one per schema so deployments sharing a database stay apart. */
function channelOf(ctx: Pick<AppContext, 'config'>): string {
  const schema = ctx.config.databaseUrl ? new URL(ctx.config.databaseUrl).searchParams.get('schema') : null;
  return `platform_claims_${schema ?? 'public'}`;
}

/** The worker running in this process, woken directly by this process's enqueues. */
export function setLocalWorker(ctx: Pick<AppContext, 'claimQueueWake'>, worker: Wakeable): void {
  ctx.claimQueueWake.worker = worker;
}

export function clearLocalWorker(ctx: Pick<AppContext, 'claimQueueWake'>, worker: Wakeable): void {
  const hub = ctx.claimQueueWake;
  if (hub.worker === worker) hub.worker = null;
}

/**
 * The channel the accepting insert must notify in its own transaction: PostgreSQL, when this
 * process runs no worker (workers of other processes are told); null when `accepted` wakes the
 * worker here, or on SQLite (no NOTIFY: other processes' workers poll).
 */
export function acceptNotifies(ctx: Pick<AppContext, 'claimQueueWake' | 'dialect'>): string | null {
  const hub = ctx.claimQueueWake;
  return hub.worker || ctx.dialect !== 'postgres' ? null : hub.channel;
}

/** Called once accepted attempts are committed: wakes the worker of this process, if any. */
export function accepted(ctx: Pick<AppContext, 'claimQueueWake'>): void {
  ctx.claimQueueWake.worker?.wake();
}

/**
 * Waits until `wakeOne(key)` in this process picks this waiter (oldest first) or `pollMs` passes:
 * the poll is the fallback for events of other processes.
 */
export function waitForWake(ctx: Pick<AppContext, 'claimQueueWake'>, key: string, pollMs: number): Promise<void> {
  const { waiters } = ctx.claimQueueWake;
  const queue = waiters.get(key) ?? [];
  waiters.set(key, queue);
  const wait = wakeableWait(pollMs, () => {
    const i = queue.indexOf(wait.wake);
    if (i >= 0) queue.splice(i, 1);
    if (queue.length === 0 && waiters.get(key) === queue) waiters.delete(key);
  });
  queue.push(wait.wake);
  return wait.done;
}

/** Lets the oldest request of this process waiting on `key` go on. */
export function wakeOne(ctx: Pick<AppContext, 'claimQueueWake'>, key: string): void {
  ctx.claimQueueWake.waiters.get(key)?.[0]?.();
}

/**
 * PostgreSQL: calls `wake` on each notification of the schema's channel, on a connection of its
 * own, until closed. A lost or refused connection is retried every second; polling covers the gap.
 */
export function listenForEnqueues(
  ctx: Pick<AppContext, 'config' | 'log'>,
  wake: () => void,
): { close(): Promise<void> } {
  let closed = false;
  let listener: pg.Client | null = null;
  const start = async (): Promise<void> => {
    if (closed || !ctx.config.databaseUrl) return;
    const url = new URL(ctx.config.databaseUrl);
    url.searchParams.delete('schema');
    const client = new pg.Client({ connectionString: url.toString() });
    const retry = () => {
      if (listener === client) listener = null;
      client.end().catch(() => {});
      if (!closed) setTimeout(() => void start(), 1000).unref();
    };
    client.on('error', (err) => {
      ctx.log.warn({ err }, 'claim queue: listener connection lost; polling until it is back');
      retry();
    });
    client.on('notification', wake);
    try {
      await client.connect();
      await client.query(`listen "${channelOf(ctx)}"`);
      if (closed) {
        await client.end();
        return;
      }
      listener = client;
    } catch (err) {
      ctx.log.warn({ err }, 'claim queue: could not listen for notifications; polling');
      retry();
    }
  };
  void start();
  return {
    async close() {
      closed = true;
      const l = listener;
      listener = null;
      await l?.end().catch(() => {});
    },
  };
}
