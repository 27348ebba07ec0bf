// Worker threads that build large trees off the event loop. A tree of 2^20 leaves costs a few
// seconds of hashing; split into chunks (aligned subtrees), it runs on every core while the main
// thread keeps answering requests. Workers start on first use and stop after a minute idle. A
// worker that dies fails the chunk it held (the build rejects and is retried by the next request);
// the pool starts a replacement for the work still queued.
import { Worker } from 'node:worker_threads';
import type { ChunkTask } from './tree.ts';

interface Job {
  task: ChunkTask;
  resolve: () => void;
  reject: (err: Error) => void;
}

interface Slot {
  worker: Worker;
  job: Job | null;
  idleTimer: NodeJS.Timeout | null;
}

const WORKER_URL = new URL('./build-worker.ts', import.meta.url);

export class BuildPool {
  readonly threads: number;
  private readonly idleMs: number;
  private readonly slots = new Set<Slot>();
  private readonly queue: Job[] = [];
  private closed = false;

  /** `threads` 0: no workers; callers build on the main thread. */
  constructor(threads: number, idleMs = 60_000) {
    this.threads = threads;
    this.idleMs = idleMs;
  }

  /** Workers currently running (started and not yet stopped). */
  get size(): number {
    return this.slots.size;
  }

  run(task: ChunkTask): Promise<void> {
    if (this.closed) return Promise.reject(new Error('The merkle build pool is closed'));
    if (this.threads === 0) return Promise.reject(new Error('The merkle build pool has no threads'));
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ task, resolve, reject });
      this.pump();
    });
  }

  /** Stops every worker now; chunks in flight and queued fail. Later runs start new workers. */
  async terminateWorkers(reason = 'The merkle build workers were stopped'): Promise<void> {
    for (const job of this.queue.splice(0)) job.reject(new Error(reason));
    const stopping = [...this.slots].map((slot) => this.stop(slot, new Error(reason)));
    await Promise.all(stopping);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.terminateWorkers('The merkle build pool is closed');
  }

  private pump(): void {
    while (this.queue.length > 0) {
      let slot = [...this.slots].find((s) => s.job === null);
      if (!slot) {
        if (this.slots.size >= this.threads) return;
        slot = this.spawn();
      }
      const job = this.queue.shift()!;
      if (slot.idleTimer) clearTimeout(slot.idleTimer);
      slot.idleTimer = null;
      slot.job = job;
      slot.worker.postMessage(job.task);
    }
  }

  private spawn(): Slot {
    const worker = new Worker(WORKER_URL);
    worker.unref(); // a build in flight must not keep a finished CLI process alive
    const slot: Slot = { worker, job: null, idleTimer: null };
    this.slots.add(slot);
    worker.on('message', (reply: { ok: boolean; message?: string }) => {
      const job = slot.job;
      slot.job = null;
      if (job) {
        if (reply.ok) job.resolve();
        else job.reject(new Error(`Merkle tree build failed: ${reply.message}`));
      }
      this.pump();
      if (slot.job === null && this.slots.has(slot)) {
        slot.idleTimer = setTimeout(() => void this.stop(slot, null), this.idleMs);
        slot.idleTimer.unref();
      }
    });
    worker.on('error', (err) => this.lost(slot, err));
    worker.on('exit', (code) => this.lost(slot, new Error(`worker exited with code ${code}`)));
    return slot;
  }

  /** A worker died: fail its chunk, forget it, and keep queued work going on a new one. */
  private lost(slot: Slot, err: Error): void {
    if (!this.slots.delete(slot)) return;
    if (slot.idleTimer) clearTimeout(slot.idleTimer);
    slot.job?.reject(new Error(`Merkle tree build failed: a build worker stopped (${err.message})`));
    slot.job = null;
    if (!this.closed) this.pump();
  }

  private async stop(slot: Slot, err: Error | null): Promise<void> {
    if (!this.slots.delete(slot)) return;
    if (slot.idleTimer) clearTimeout(slot.idleTimer);
    if (slot.job && err) slot.job.reject(err);
    slot.job = null;
    await slot.worker.terminate();
  }
}
