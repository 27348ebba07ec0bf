// Custom plugin calls run on a worker thread of their own (call-worker.ts), one per AppContext.
// Why: a call's body, signature, TLS and HTTP work and the checks of its answer cost the event
// loop about as much as the rest of the attempt; on SQLite, where the event loop is the limit,
// that halved the claim's throughput. On the thread the loop only hands over the CallContext and
// receives the outcome (bench/plugins.ts; docs/plugins-platform.md, "The plugin call thread").
// The thread holds the process's egress client for these calls, built from the same configuration.
//
// Calls made in one turn of the event loop travel in one message, and so do the outcomes of one
// turn of the thread's loop. A message is one flat array of a few values per call (no object per
// call to copy and rebuild): a call's version travels as its CallSpec text, which the thread
// parses once per version. A thread that dies fails the calls it held (a clear outcome, not a
// hang); the next call starts a new one. The thread never keeps a finished CLI process alive.
import { Worker } from 'node:worker_threads';
import type { AppContext } from '../context.ts';
import { egressOptionsOf, type EgressOptions, type EgressStats } from '../egress/index.ts';
import type { JsonObject } from '../plugins/types.ts';
import { TurnBatcher } from '../shared/turn-batcher.ts';
import type { CallContext, CallOutcome } from './call.ts';
import { FAILED, OK, OUTCOME_VALUES, writeCall, type FromCallThread, type ToCallThread } from './call-messages.ts';

const WORKER_URL = new URL('./call-worker.ts', import.meta.url);

interface Pending {
  resolve: (o: CallOutcome) => void;
  reject: (e: Error) => void;
}

export class CallThread {
  private readonly options: EgressOptions;
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly statsWaiting = new Map<number, (s: EgressStats) => void>();
  // one message per turn: the calls of every request handled in this turn go together
  private readonly outbox = new TurnBatcher<[number, CallContext, number]>((calls) => this.flush(calls));
  private closed = false;

  /** `options` must be cloneable: the thread builds its own egress client from them. */
  constructor(options: Omit<EgressOptions, 'resolve'>) {
    this.options = options;
  }

  /** One signed call (call.ts `callEndpoint`), made on the thread. */
  call(context: CallContext, now: number): Promise<CallOutcome> {
    if (this.closed) return Promise.resolve(closedOutcome);
    const id = this.nextId++;
    this.outbox.add([id, context, now]);
    return new Promise<CallOutcome>((resolve, reject) => this.pending.set(id, { resolve, reject }));
  }

  /** The thread's egress counters (requests, TLS handshakes, open pools). */
  stats(): Promise<EgressStats> {
    if (this.closed || !this.worker) return Promise.resolve(NO_STATS);
    const id = this.nextId++;
    const worker = this.worker;
    worker.ref();
    return new Promise<EgressStats>((resolve) => {
      this.statsWaiting.set(id, resolve);
      worker.postMessage({ stats: id } satisfies ToCallThread);
    });
  }

  /** Stops the thread now: calls in flight fail with `reason`; later calls start a new thread. */
  async terminate(reason = 'the plugin call thread stopped'): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    this.settleAll(reason);
    if (worker) await worker.terminate();
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.terminate('the egress client is closed');
  }

  private flush(batch: Array<[number, CallContext, number]>): void {
    // calls settled meanwhile (the thread stopped: settleAll) are never sent, their attempts have their outcome
    const calls = batch.filter(([id]) => this.pending.has(id));
    if (calls.length === 0) return;
    const worker = this.worker ?? this.spawn();
    worker.ref(); // calls in flight keep the process alive, like any pending request
    try {
      const values: unknown[] = [];
      for (const [id, context, now] of calls) writeCall(values, id, context, now);
      worker.postMessage({ calls: values } satisfies ToCallThread);
    } catch (err) {
      // a context that cannot be copied to the thread: the calls of this batch fail, later ones go on
      for (const [id] of calls) {
        this.pending.get(id)?.reject(err instanceof Error ? err : new Error(String(err)));
        this.pending.delete(id);
      }
      if (this.pending.size === 0) worker.unref();
    }
  }

  private spawn(): Worker {
    const worker = new Worker(WORKER_URL, { workerData: this.options });
    worker.unref();
    worker.on('message', (msg: FromCallThread) => {
      if ('stats' in msg) {
        this.statsWaiting.get(msg.stats)?.(msg.value);
        this.statsWaiting.delete(msg.stats);
      } else {
        const m = msg.outcomes;
        for (let at = 0; at < m.length; at += OUTCOME_VALUES) {
          const p = this.pending.get(m[at] as number);
          if (!p) continue;
          this.pending.delete(m[at] as number);
          const kind = m[at + 1];
          if (kind === OK) p.resolve({ ok: true, response: m[at + 2] as JsonObject });
          else if (kind === FAILED)
            p.resolve(
              m[at + 3] === undefined
                ? { ok: false, error: m[at + 2] as string }
                : { ok: false, error: m[at + 2] as string, detail: m[at + 3] as string },
            );
          else p.reject(new Error(m[at + 2] as string));
        }
      }
      if (this.pending.size === 0 && this.statsWaiting.size === 0) worker.unref();
    });
    // a thread that fails or exits on its own takes its calls with it; the next call starts another
    const gone = (reason: string) => {
      if (this.worker !== worker) return;
      this.worker = null;
      this.settleAll(reason);
    };
    worker.on('error', (err) => gone(`the plugin call thread failed (${err.message})`));
    worker.on('exit', (code) => gone(`the plugin call thread exited (code ${code})`));
    this.worker = worker;
    return worker;
  }

  /** Every call in flight fails with `reason`, as a failed call (the attempt fails, clearly). */
  private settleAll(reason: string): void {
    const outcome: CallOutcome = { ok: false, error: `Plugin endpoint could not be called: ${reason}` };
    for (const p of this.pending.values()) p.resolve(outcome);
    this.pending.clear();
    for (const resolve of this.statsWaiting.values()) resolve(NO_STATS);
    this.statsWaiting.clear();
  }
}

/** The counters of a thread that is not running. */
const NO_STATS: EgressStats = Object.freeze({ requests: 0, tlsHandshakes: 0, openPools: 0 });
const closedOutcome: CallOutcome = {
  ok: false,
  error: 'Plugin endpoint could not be called: the egress client is closed',
};

/** The call thread of one AppContext (`services.callThread`), created on first use and stopped with the context. */
export function callThreadFor(ctx: Pick<AppContext, 'config' | 'services' | 'onClose'>): CallThread {
  let thread = ctx.services.callThread;
  if (!thread) {
    const created = (ctx.services.callThread = thread = new CallThread(egressOptionsOf(ctx)));
    ctx.onClose.push(() => created.close());
  }
  return thread;
}
