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
