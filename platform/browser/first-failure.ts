/** `p`, unless the page call fails first (FirstFailure.guard). */
export type Guard = <R>(p: Promise<R>) => Promise<R>;

/**
 * The first thing that went wrong in one page call (a refusal, the time limit, the size limit,
 * cancellation). It wins over whatever fails after it, and `guard` ends any wait of the call as
 * soon as it happens.
 */
export class FirstFailure {
  error?: Error;
  private readonly failed: Promise<never>;
  private rejectFailed!: (err: Error) => void;

  /** `onFail` runs once, at the first failure (the engine closes the call's context). */
  constructor(private readonly onFail: () => void) {
    this.failed = new Promise<never>((_, reject) => {
      this.rejectFailed = reject;
    });
    this.failed.catch(() => {});
  }

  readonly fail = (err: Error): void => {
    if (this.error) return;
    this.error = err;
    this.rejectFailed(err);
    this.onFail();
  };

  /** `p`, unless the call fails first. */
  readonly guard: Guard = (p) => Promise.race([p, this.failed]);
}

/**
 * Fails the call when its time limit passes (BROWSER_PAGE_TIMEOUT_MS) or its tool call is
 * cancelled; returns what stops watching.
 */
export function failOnTimeoutOrAbort(failure: FirstFailure, input: { url: string; timeoutMs: number; signal: AbortSignal }): () => void {
  const { url, timeoutMs, signal } = input;
  const timer = setTimeout(
    () => failure.fail(new Error(`${url} did not load within ${timeoutMs} ms (the browser's time limit, BROWSER_PAGE_TIMEOUT_MS).`)),
    timeoutMs,
  );
  const onAbort = () => failure.fail(new Error('The tool call was cancelled (its deadline passed).'));
  signal.addEventListener('abort', onAbort, { once: true });
  return () => {
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
  };
}
