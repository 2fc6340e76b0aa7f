import type { Pool } from '../../../platform/database/database.js';
import { countFinishedCalls } from '../store/audit.js';

/** Told how many of a batch's calls have finished, each time that number grows. */
export type BatchProgress = (done: number, total: number) => void;

/** How often a running batch's finished calls are counted while someone follows its progress. */
const PROGRESS_POLL_MS = 500;

/**
 * Follows a running batch by its calls' audit rows: each call's outcome is committed there the
 * moment it finishes, whichever worker ran it, while the workflow itself is only seen between
 * workflow tasks (the calls are local activities). One short index lookup every 500 ms, only for a
 * caller that asked for progress; `stop` ends it (the batch's answer is the last word).
 */
export function followBatchProgress(pool: Pool, callKeys: readonly string[], report: BatchProgress): { stop(): void } {
  let reported = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const tick = async () => {
    try {
      const done = await countFinishedCalls(pool, callKeys);
      if (!stopped && done > reported) {
        reported = done;
        report(done, callKeys.length);
      }
    } catch {
      // Progress is best effort: a failed count waits for the next tick.
    }
    if (!stopped && reported < callKeys.length) timer = setTimeout(tick, PROGRESS_POLL_MS);
  };
  timer = setTimeout(tick, PROGRESS_POLL_MS);
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
