/**
 * At most a few pieces of one kind of work in flight at once per key (a user, a tenant), in this
 * process. Work beyond the bound is refused at once rather than queued: what it guards is work an
 * attacker can start by the hundred for nothing (a portal form posted with random keys), and a
 * queue would only hold the attacker's requests open longer.
 */
export class InFlightLimit {
  private readonly counts = new Map<string, number>();

  /** `bounds[i]` is the most in flight for `keys[i]`. */
  constructor(private readonly bounds: readonly number[]) {}

  /** Takes a place under every key, or none: the release (call once), or undefined when a key is at its bound. */
  tryEnter(keys: readonly string[]): (() => void) | undefined {
    if (this.isFull(keys)) return undefined;
    for (const key of keys) this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const key of keys) {
        const left = (this.counts.get(key) ?? 1) - 1;
        if (left > 0) this.counts.set(key, left);
        else this.counts.delete(key);
      }
    };
  }

  /** Whether some key is at its bound now (tryEnter would refuse): a cheap early answer, never an admission. */
  isFull(keys: readonly string[]): boolean {
    if (keys.length !== this.bounds.length) throw new Error(`InFlightLimit: ${this.bounds.length} keys expected, got ${keys.length}`);
    return keys.some((key, i) => (this.counts.get(key) ?? 0) >= this.bounds[i]);
  }

  /** In flight under `key` now. */
  inFlight(key: string): number {
    return this.counts.get(key) ?? 0;
  }
}
