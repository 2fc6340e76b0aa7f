import { outcomeUnknown } from '../../core/execution.js';
import { approvalWorkflowId } from '../../core/ids.js';
import { inlineResultLimit } from '../../core/stored-results.js';
import { approvalEvents } from '../../platform/telemetry/metrics.js';
import type { ActivityDeps } from '../activity-deps.js';
import type { ExecuteToolInput, ToolCallRunner } from '../execution/execute-tool.js';
import type { ApprovalActivities } from './activity-types.js';
import {
  type Approval,
  claimApprovedRun,
  closeUndecidedApproval,
  finishApproval,
  getApproval,
  openApprovedCall,
} from './store/approvals.js';

/**
 * The approval workflow's activities (features/approvals/workflow.ts). The approved call runs through the
 * execute activity's own runner — policy with roles read fresh, argument parse, claim, deadline,
 * audit — as the requester, under a call key of its own, exactly once.
 */
export function createApprovalActivities(
  deps: Pick<ActivityDeps, 'pool' | 'keyring' | 'config'>,
  runner: ToolCallRunner,
): ApprovalActivities {
  const callInput = async (approval: Approval): Promise<ExecuteToolInput> => ({
    callKey: approvalWorkflowId(approval.id),
    tenantId: approval.tenantId,
    userId: approval.requesterUserId,
    call: await openApprovedCall(deps.pool, deps.keyring, approval),
    claimFirst: true,
    // A large result is stored and the outcome carries its reference, like a batch's.
    inlineResultMaxBytes: inlineResultLimit(1, deps.config.RESULT_INLINE_MAX_BYTES),
  });

  return {
    async closeUndecidedApproval({ approvalId, status }) {
      const after = (await closeUndecidedApproval(deps.pool, approvalId, status)) ?? 'CANCELLED';
      if (after === status) approvalEvents.inc({ event: status === 'EXPIRED' ? 'expired' : 'cancelled' });
      return after;
    },

    async approvalStatus({ approvalId }) {
      return (await getApproval(deps.pool, approvalId))?.status ?? 'CANCELLED';
    },

    async runApprovedCall({ approvalId }) {
      const approval = await getApproval(deps.pool, approvalId);
      if (!approval) return { status: 'CANCELLED' };
      // Only the first run takes the approval from APPROVED to RUNNING; any other finds it taken.
      if (!(await claimApprovedRun(deps.pool, approvalId))) return { status: approval.status };
      const outcome = await runner.executeToolCall(await callInput(approval), { approved: true });
      await finishApproval(deps.pool, deps.keyring, { ...approval, status: 'RUNNING' }, outcome);
      return { status: 'DONE' };
    },

    async recordLostApprovedCall({ approvalId, timedOut }) {
      const approval = await getApproval(deps.pool, approvalId);
      if (!approval) return { status: 'CANCELLED' };
      if (approval.status !== 'RUNNING') return { status: approval.status };
      const input = await callInput(approval);
      await runner.recordLostToolCall({ ...input, errorCode: timedOut ? 'timeout' : 'outcome_unknown' });
      await finishApproval(deps.pool, deps.keyring, approval, outcomeUnknown(approval.tool, timedOut));
      return { status: 'DONE' };
    },
  };
}
