// WAL checkpoints off the event loop. In WAL mode every commit appends to the -wal file; a
// checkpoint copies those pages back into the database file and fsyncs it. SQLite normally runs it
// inside the commit that crosses `wal_autocheckpoint` pages, so every few hundred commits one
// request pays a multi-millisecond fsync on the event loop and all others wait behind it. Here a
// worker thread with its own connection checkpoints every `intervalMs` instead (PASSIVE: it never
// blocks the writer or readers), and the main connection's own autocheckpoint stays only as a
// backstop: if the thread stops, the WAL still cannot grow beyond ~40 MB.
import { Worker } from 'node:worker_threads';
import type SQLite from 'better-sqlite3';

/** Pages the WAL may hold before the main connection checkpoints by itself (4 KiB pages: ~40 MB). */
export const BACKSTOP_PAGES = 10_000;
const WORKER_URL = new URL('./checkpoint-worker.ts', import.meta.url);

export interface Checkpointer {
  /** Frames in the WAL and frames copied back, as of the thread's last checkpoint that changed them. */
  readonly last: { log: number; checkpointed: number } | null;
  /** Whether the thread is running (false after stop() or if it died). */
  readonly running: boolean;
  /** The thread (tests stop it abruptly to show the backstop holds). */
  readonly worker: Worker;
  stop(): Promise<void>;
}

export function startCheckpointer(database: SQLite.Database, file: string, intervalMs = 100): Checkpointer {
  database.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`);
  const worker = new Worker(WORKER_URL, { workerData: { file, intervalMs } });
  worker.unref();
  let last: Checkpointer['last'] = null;
  let running = true;
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  worker.on('message', (m: { log: number; checkpointed: number }) => {
    last = m;
  });
  worker.on('error', () => {}); // the backstop takes over; 'exit' follows
  void exited.then(() => {
    running = false;
    // back to SQLite's default so the main connection checkpoints as usual
    if (database.open) database.pragma('wal_autocheckpoint = 1000');
  });
  return {
    get last() {
      return last;
    },
    get running() {
      return running;
    },
    worker,
    async stop() {
      if (!running) return;
      worker.postMessage('stop');
      const timeout = setTimeout(() => void worker.terminate(), 5000);
      await exited;
      clearTimeout(timeout);
    },
  };
}
