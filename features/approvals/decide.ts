import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import type { Logger } from 'pino';
import { mayApprove } from '../../core/approval-policy.js';
import type { Caller } from '../../core/caller.js';
import { approvalWorkflowId } from '../../core/ids.js';
import type { Pool } from '../../platform/database/database.js';
import { approvalEvents } from '../../platform/telemetry/metrics.js';
import { getTenant } from '../accounts/store/tenants.js';
import {
  APPROVAL_REASON_MAX_CHARS,
  type Approval,
  cancelApprovedWithoutRun,
  type Decision,
  decideApproval,
  getApproval,
} from './store/approvals.js';
import { approvalDecidedSignal } from './workflow.js';

type DecideDeps = { pool: Pool; temporal: Client; logger: Logger };

/**
 * The approval, if `who` may decide it (the tenant's approver roles, read fresh); undefined
 * otherwise — exactly as for an id that does not exist, so ids cannot be probed.
 */
export async function approvalFor(deps: Pick<DecideDeps, 'pool'>, who: Caller, approvalId: string): Promise<Approval | undefined> {
  const approval = await getApproval(deps.pool, approvalId);
  if (!approval || approval.tenantId !== who.tenantId) return undefined;
  const settings = (await getTenant(deps.pool, approval.tenantId))?.settings ?? {};
  return mayApprove(settings, approval, who) ? approval : undefined;
}

type DecideResult = { result: 'decided' | 'already-decided'; approval: Approval } | { result: 'unknown' };

/**
 * A person's decision (the portal's POST, CSRF-checked and signed in): allowed by the approver
 * rule; recorded in Postgres under the row's lock, so the first decision wins and a replayed or
 * racing one changes nothing (`already-decided`); audited (who, when, reason); then signalled to
 * the approval's workflow, which runs an approved call once. Should the signal not get through,
 * the workflow still finds the decision in the database when its timer fires.
 */
export async function decide(deps: DecideDeps, who: Caller, approvalId: string, decision: Decision, reason: string): Promise<DecideResult> {
  const approval = await approvalFor(deps, who, approvalId);
  if (!approval) return { result: 'unknown' };
  const trimmed = reason.trim().slice(0, APPROVAL_REASON_MAX_CHARS);
  const recorded = await decideApproval(deps.pool, {
    id: approval.id,
    tenantId: approval.tenantId,
    decision,
    decidedBy: who.userId,
    reason: trimmed || null,
  });
  if (!recorded) return { result: 'unknown' };
  if (!recorded.decided) return { result: 'already-decided', approval: recorded.approval };
  const handle = deps.temporal.workflow.getHandle(approvalWorkflowId(approval.id));
  for (let attempt = 1; attempt <= 3; attempt++) {
    try {
      await deps.temporal.withDeadline(Date.now() + 5_000, () => handle.signal(approvalDecidedSignal, { status: decision }));
      break;
    } catch (err) {
      deps.logger.warn({ approvalId: approval.id, attempt, err: (err as Error).message }, 'could not signal an approval decision');
      if (err instanceof WorkflowNotFoundError) {
        // Its workflow was closed early (terminated): nothing will run the call. Say so, for good.
        if (decision === 'APPROVED') await cancelApprovedWithoutRun(deps.pool, approval.id);
        break;
      }
    }
  }
  deps.logger.info({ approvalId: approval.id, decision, decidedBy: who.userId, tool: approval.tool }, 'approval decided');
  approvalEvents.inc({ event: decision === 'APPROVED' ? 'approved' : 'denied' });
  return { result: 'decided', approval: recorded.approval };
}
