// The SQLite checkpointer thread (see checkpointer.ts): its own connection copies committed WAL
// frames into the database file, and pays that file's fsync, so the event loop never does.
import { parentPort, workerData } from 'node:worker_threads';
import SQLite from 'better-sqlite3';

const { file, intervalMs } = workerData as { file: string; intervalMs: number };
const db = new SQLite(file);
db.pragma('busy_timeout = 1000');
// PASSIVE: copy what can be copied without waiting on readers or the writer.
const checkpoint = db.prepare('pragma wal_checkpoint(PASSIVE)');

let last = '';
function run(): void {
  try {
    const r = checkpoint.get() as { busy: number; log: number; checkpointed: number };
    // report changes only: an idle service's main thread is not woken ten times a second
    const now = `${r.log}/${r.checkpointed}`;
    if (now !== last) parentPort!.postMessage({ log: r.log, checkpointed: r.checkpointed });
    last = now;
  } catch {
    // locked by another process's checkpoint or a schema change: the next tick copies the rest
  }
}

const timer = setInterval(run, intervalMs);
parentPort!.on('message', (message: string) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  run();
  db.close();
  parentPort!.close();
});
