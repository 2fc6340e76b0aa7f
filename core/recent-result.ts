/**
 * An answer reused while it is recent: `current` answers the last result while it is younger
 * than `maxAgeMs`, else starts `produce` once and every caller in between shares that one call.
 * An expensive answer asked for often (a readiness probe, a capture screenshot) is then made at
 * most once per `maxAgeMs`, however many ask.
 */
export class RecentResult<T> {
  private last?: { at: number; value: T };
  private inFlight?: Promise<T>;

  constructor(
    private readonly maxAgeMs: number,
    private readonly produce: () => Promise<T>,
  ) {}

  current(): Promise<T> {
    if (this.last && performance.now() - this.last.at < this.maxAgeMs) return Promise.resolve(this.last.value);
    this.inFlight ??= this.produce()
      .then((value) => {
        this.last = { at: performance.now(), value };
        return value;
      })
      .finally(() => {
        this.inFlight = undefined;
      });
    return this.inFlight;
  }
}
