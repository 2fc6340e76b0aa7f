/**
 * A fixed number of slots shared fairly between keys (tenants). While every slot is taken, a
 * freed slot goes to the waiting key that holds the fewest slots now (ties: the one waiting
 * longest), so one tenant queuing many calls delays another tenant's call by at most one call,
 * never by its whole queue. Within a key, calls go in the order they came.
 */

interface Waiter {
  key: string;
  seq: number;
  grant: () => void;
}

export class FairSlots {
  private used = 0;
  private seq = 0;
  private readonly held = new Map<string, number>();
  private readonly waiting: Waiter[] = [];

  constructor(private readonly size: number) {}

  /** Slots `key` holds now (for tests and metrics). */
  holding(key: string): number {
    return this.held.get(key) ?? 0;
  }

  /** Waits for a slot for `key`; resolves to its release (idempotent). Rejects when `signal` aborts first. */
  acquire(key: string, signal: AbortSignal, cancelled = 'Cancelled while waiting for a free slot.'): Promise<() => void> {
    if (signal.aborted) return Promise.reject(new Error(cancelled));
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        key,
        seq: this.seq++,
        grant: () => {
          signal.removeEventListener('abort', onAbort);
          resolve(this.releaser(key));
        },
      };
      const onAbort = () => {
        const at = this.waiting.indexOf(waiter);
        if (at < 0) return;
        this.waiting.splice(at, 1);
        reject(new Error(cancelled));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
      this.dispatch();
    });
  }

  private releaser(key: string): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.used--;
      const left = (this.held.get(key) ?? 1) - 1;
      if (left > 0) this.held.set(key, left);
      else this.held.delete(key);
      this.dispatch();
    };
  }

  /** Hands free slots to waiters: the key holding fewest first, then the longest waiting. */
  private dispatch(): void {
    while (this.used < this.size && this.waiting.length) {
      let best = 0;
      for (let i = 1; i < this.waiting.length; i++) {
        const a = this.waiting[i];
        const b = this.waiting[best];
        const byHeld = this.holding(a.key) - this.holding(b.key);
        if (byHeld < 0 || (byHeld === 0 && a.seq < b.seq)) best = i;
      }
      const [next] = this.waiting.splice(best, 1);
      this.used++;
      this.held.set(next.key, this.holding(next.key) + 1);
      next.grant();
    }
  }
}
