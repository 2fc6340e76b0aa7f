/** Deadlines this close together count as the same wait. */
const SAME_DEADLINE_MS = 1_000;

/**
 * Waits on one thing (a workflow's Update) shared by the callers of one process: Temporal admits
 * ten in-flight updates per workflow, so a caller whose wait would end no earlier than a running
 * one's joins it instead of sending another. Pure bookkeeping; the waiters (features/connections/waiter.ts,
 * features/approvals/waiter.ts) say what a wait is.
 */
export class SharedWaits<T> {
  private readonly inflight = new Map<string, { deadline: number; promise: Promise<T> }>();

  /**
   * `start`s a wait on `key` ending at `deadline`, or joins the running one when it ends no later
   * (within SAME_DEADLINE_MS); `joined` may reword its answer for a caller whose own wait would
   * have ended later (`sameWait` false).
   */
  async wait(key: string, deadline: number, start: () => Promise<T>, joined: (shared: T, sameWait: boolean) => T = (s) => s): Promise<T> {
    const shared = this.inflight.get(key);
    if (shared && shared.deadline <= deadline + SAME_DEADLINE_MS) {
      return joined(await shared.promise, deadline - shared.deadline <= SAME_DEADLINE_MS);
    }
    const promise = start();
    this.inflight.set(key, { deadline, promise });
    try {
      return await promise;
    } finally {
      if (this.inflight.get(key)?.promise === promise) this.inflight.delete(key);
    }
  }
}
