import { performance } from 'node:perf_hooks';

export interface SustainedRun {
  concurrency: number;
  /** From the start until the last caller's last call ended (calls in flight at the deadline finish). */
  elapsedMs: number;
  ok: number;
  errors: number;
  /** Error messages and how often each came. */
  errorKinds: Record<string, number>;
  /** Latency of every successful call, ms. */
  latencies: number[];
}

/**
 * `concurrency` callers, each calling `call` back to back until `durationMs` have passed (a call
 * running then is let finish). A call that throws is an error, counted by its message; the run
 * goes on. Stops early, throwing, when `signal` aborts.
 */
export async function sustain(
  concurrency: number,
  durationMs: number,
  call: () => Promise<void>,
  signal: AbortSignal,
): Promise<SustainedRun> {
  const started = performance.now();
  const endAt = started + durationMs;
  const result: SustainedRun = { concurrency, elapsedMs: 0, ok: 0, errors: 0, errorKinds: {}, latencies: [] };
  const caller = async () => {
    while (performance.now() < endAt) {
      signal.throwIfAborted();
      const callStarted = performance.now();
      try {
        await call();
        result.latencies.push(performance.now() - callStarted);
        result.ok++;
      } catch (err) {
        signal.throwIfAborted();
        const kind = (err as Error).message.slice(0, 160);
        result.errorKinds[kind] = (result.errorKinds[kind] ?? 0) + 1;
        result.errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, caller));
  result.elapsedMs = performance.now() - started;
  return result;
}
