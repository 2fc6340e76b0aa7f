import { type ApprovalWaitStatus, approvalWaitStatus } from '../../core/approvals.js';
import type { Config } from '../../core/config.js';
import { failure, type ToolOutcome } from '../../core/execution.js';
import { isStoredOutcome, outcomeOfStoredResult } from '../../core/stored-results.js';
import type { Pool } from '../../platform/database/database.js';
import type { Keyring } from '../../platform/database/keyring.js';
import { readStoredResult } from '../results/store/stored-results.js';
import { type Approval, readApprovalOutcome } from './store/approvals.js';

/**
 * Where an approval stands for its requester: its wait status and, once its approved call ran,
 * that call's outcome as execute answers it (a stored result read back and cut at the result
 * limit, naming its resultRef when cut). APPROVED without a result: the call still runs.
 * The wait_for_approval meta-tool, a resubmitted batch and agent workflows all answer through it.
 */
export async function approvalAnswer(
  deps: { pool: Pool; keyring: Keyring; config: Pick<Config, 'CONNECTIONS_TOOL_RESULT_MAX_BYTES'> },
  approval: Approval,
): Promise<{ status: ApprovalWaitStatus; result?: ToolOutcome }> {
  // Past its expiry an undecided approval can no longer be decided (decide refuses it): it is
  // EXPIRED for everyone, even if its workflow — closed early by an operator — never recorded so.
  const expired = approval.status === 'PENDING' && approval.expiresAt.getTime() <= Date.now();
  const status = expired ? 'EXPIRED' : approvalWaitStatus(approval.status);
  if (approval.status !== 'DONE') return { status };
  const outcome = await readApprovalOutcome(deps.pool, deps.keyring, approval);
  if (!outcome) return { status };
  if (!isStoredOutcome(outcome)) return { status, result: outcome };
  const owner = { tenantId: approval.tenantId, userId: approval.requesterUserId };
  const stored = await readStoredResult(deps.pool, deps.keyring, owner, outcome.stored.resultRef);
  // Only after RESULT_RETENTION_DAYS.
  if (!stored) return { status, result: failure('tool_failed', `${approval.tool} ran, but its stored result has expired.`) };
  return { status, result: outcomeOfStoredResult(stored.json, outcome.stored, deps.config.CONNECTIONS_TOOL_RESULT_MAX_BYTES) };
}
