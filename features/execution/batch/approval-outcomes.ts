import { type ApprovalWaitStatus, approvalPageUrl } from '../../../core/approvals.js';
import type { Caller } from '../../../core/caller.js';
import { failure, type ToolOutcome } from '../../../core/execution.js';
import { approvalAnswer } from '../../approvals/answer.js';
import { getApprovalForRequester } from '../../approvals/store/approvals.js';
import type { ServiceContext } from '../../context.js';

/**
 * A batch's approval_required entries as they stand now: a request sent again with its requestId
 * reads its batch's recorded answer, so an approval decided since then answers here — the approved
 * call's outcome (never a second approval), or approval_required with the approval's status.
 */
export async function resolveApprovalEntries(ctx: ServiceContext, caller: Caller, outcomes: ToolOutcome[]): Promise<ToolOutcome[]> {
  return Promise.all(
    outcomes.map(async (outcome) => {
      if (outcome.ok || outcome.error.code !== 'approval_required' || !outcome.error.approvalId) return outcome;
      const approval = await getApprovalForRequester(ctx.pool, caller, outcome.error.approvalId);
      if (!approval || approval.status === 'PENDING') return outcome;
      const answer = await approvalAnswer(ctx, approval);
      if (answer.result) return answer.result;
      const { approvalId } = outcome.error;
      const url = approvalPageUrl(ctx.config, approvalId);
      const text: Record<ApprovalWaitStatus, string> = {
        PENDING: `${approval.tool} still waits for a person's approval at ${url}.`,
        APPROVED: `${approval.tool} was approved and is running; call wait_for_approval with approvalId "${approvalId}" for its result.`,
        DENIED: `${approval.tool} was denied by a person${approval.reason ? `: ${approval.reason}` : ''}; it did not run.`,
        EXPIRED: `The approval of ${approval.tool} expired without a decision; it did not run. Send the call again to ask anew.`,
      };
      return failure('approval_required', text[answer.status], { ...outcome.error, approvalStatus: answer.status });
    }),
  );
}
