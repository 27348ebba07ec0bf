// Work asked for during one turn of the event loop, done together at the start of the next
// (setImmediate): the concurrent requests of a burst share one statement, one message or one
// notification instead of one each.

export class TurnBatcher<T> {
  private items: T[] = [];
  private readonly flush: (items: T[]) => void;

  /** `flush` gets the items added since the last flush, in order; it must handle its own errors. */
  constructor(flush: (items: T[]) => void) {
    this.flush = flush;
  }

  add(item: T): void {
    if (this.items.length === 0) {
      setImmediate(() => {
        const batch = this.items;
        this.items = [];
        this.flush(batch);
      });
    }
    this.items.push(item);
  }
}

/**
 * Runs `fn` once the microtasks queued until then, and those they queue, have all run: after every
 * promise chain started in this turn went as far as it can without I/O or a timer. Work gathered
 * until then is gathered without waiting for the next turn of the event loop (setImmediate), for
 * reads that are themselves synchronous (SQLite's fast path), whose callers all advance through
 * microtasks alone.
 */
export function afterMicrotasks(fn: () => void): void {
  // a tick queued from a microtask runs when the microtask queue is empty
  queueMicrotask(() => process.nextTick(fn));
}
