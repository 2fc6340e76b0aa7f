import { failure, type ToolOutcome } from '../../../core/execution.js';
import type { Account } from '../../accounts/store/accounts.js';
import { SlotWaitAborted } from '../account-slots.js';
import { activitySignal } from './activity-context.js';
import type { CallAudit, CallInput, Runner } from './call.js';

/** The call ran past its deadline (or its activity was cancelled). */
export class DeadlineExceeded extends Error {}

/** Step 4, the deadline: `timeoutMs` from now, or sooner when Temporal cancels the activity. */
export function callDeadline(timeoutMs: number): AbortSignal {
  const deadline = AbortSignal.timeout(timeoutMs);
  return activitySignal() ? AbortSignal.any([deadline, activitySignal()!]) : deadline;
}

/** `p`'s answer, or DeadlineExceeded once `signal` aborts first. */
export const withinDeadline = <T>(signal: AbortSignal, p: Promise<T>) =>
  new Promise<T>((resolve, reject) => {
    if (signal.aborted) return reject(new DeadlineExceeded());
    signal.addEventListener('abort', () => reject(new DeadlineExceeded()), { once: true });
    p.then(resolve, reject);
  });

/**
 * At most CONNECTIONS_ACCOUNT_MAX_CONCURRENCY calls in flight per account; a queued call keeps its
 * deadline. The slot is given back with the call's audit row (recordCallOutcome), in the same
 * statement. A timeout when no turn came before the deadline.
 */
export async function takeAccountSlot(
  { deps, slots }: Runner,
  input: CallInput,
  integration: string,
  account: Account | undefined,
  audit: CallAudit,
  signal: AbortSignal,
): Promise<ToolOutcome | undefined> {
  if (!account) return undefined;
  try {
    audit.slot = await slots.acquire(account, signal);
    return undefined;
  } catch (err) {
    if (!(err instanceof SlotWaitAborted)) throw err;
    return failure(
      'timeout',
      `${input.call.tool} did not get a turn on the ${integration} account "${account.label}" within ${input.timeoutMs} ms: ` +
        `at most ${deps.config.CONNECTIONS_ACCOUNT_MAX_CONCURRENCY} calls run at once per account.`,
    );
  }
}
