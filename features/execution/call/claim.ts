import { failure, outcomeUnknown, type ToolOutcome } from '../../../core/execution.js';
import type { CallOutcome } from '../../../core/stored-results.js';
import { approvalOfRerun } from '../../approvals/prepare.js';
import { claimToolCallReadingCaller } from '../store/audit.js';
import { activityContext, notifyWorkflowId } from './activity-context.js';
import type { CallAudit, CallInput, ExecuteDeps } from './call.js';
import { auditIdentity } from './call.js';

/**
 * Runs the call once: with `claimFirst`, only if this run claimed its call key (a re-run answers
 * the approval its first run asked for, or outcome_unknown). A `refusal` (arguments that did not
 * open) answers instead of running. An error thrown inside Switchboard is logged and answered as
 * tool_failed. The activity heartbeats meanwhile.
 */
export async function claimAndRun(
  deps: ExecuteDeps,
  input: CallInput,
  audit: CallAudit,
  refusal: ToolOutcome | undefined,
  run: () => Promise<CallOutcome>,
): Promise<CallOutcome> {
  // Heartbeats tell Temporal this worker is alive, so a crash is noticed within seconds.
  const heartbeat = activityContext()?.info.isLocal === false && setInterval(() => activityContext()?.heartbeat(), 1000);
  try {
    // The claim's statement also reads the caller's user and tenant (one round trip for both).
    let claimed = true;
    if (input.claimFirst) {
      const { claimed: first, ...caller } = await claimToolCallReadingCaller(deps.pool, auditIdentity(input));
      claimed = first;
      audit.caller = caller;
    }
    // A re-run of a call whose first run asked for approval answers that approval again: nothing ran.
    const rerun =
      !claimed && (await approvalOfRerun(deps, input.callKey, { timeoutMs: input.timeoutMs, notifyWorkflowId: notifyWorkflowId(input) }));
    return claimed ? (refusal ?? (await run())) : rerun || outcomeUnknown(input.call.tool);
  } catch (err) {
    deps.logger.error({ tool: input.call.tool, err: (err as Error).message }, 'tool call failed inside Switchboard');
    return failure('tool_failed', `${input.call.tool} failed inside Switchboard; the server logged the details.`);
  } finally {
    if (heartbeat) clearInterval(heartbeat);
  }
}
