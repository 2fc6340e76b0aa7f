import { type Client, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { Logger } from 'pino';
import { approvalTtlSec } from '../../core/approval-policy.js';
import { approvalSummary, redactedArguments } from '../../core/approval-summary.js';
import { approvalPageUrl } from '../../core/approvals.js';
import type { Config } from '../../core/config.js';
import { failure, type ToolCallRequest, type ToolOutcome } from '../../core/execution.js';
import { approvalWorkflowId } from '../../core/ids.js';
import type { TenantSettings } from '../../core/policy.js';
import { SA } from '../../core/search-attributes.js';
import type { Pool } from '../../platform/database/database.js';
import type { Keyring } from '../../platform/database/keyring.js';
import { inTransaction, lockKey } from '../../platform/database/queryable.js';
import { approvalEvents } from '../../platform/telemetry/metrics.js';
import {
  type Approval,
  closeUndecidedApproval,
  countPendingApprovals,
  createApproval,
  getApprovalByCallKey,
  MAX_PENDING_APPROVALS_PER_USER,
} from './store/approvals.js';
import type { ApprovalWorkflowInput } from './workflow.js';

type ApprovalDeps = { pool: Pool; keyring: Keyring; temporal: Client; config: Config; logger: Logger };

/** Room above the tool's own deadline for the credential lookup, a refresh and the audit write (as a batch has). */
const RUN_MARGIN_MS = 30_000;
/** Starting the workflow is one short RPC: bounded, so an unreachable Temporal answers promptly. */
const START_TIMEOUT_MS = 10_000;

interface RunContext {
  /** The tool's deadline (bounds the approved call's activity). */
  timeoutMs: number;
  /** An agent's workflow to signal once the approval is settled. */
  notifyWorkflowId?: string;
}

/**
 * A call that needs approval does not run: this records it (arguments sealed, a summary without
 * secrets), starts its `approval-<id>` workflow, and answers `approval_required` with the id, the
 * portal page for the human and the summary. The workflow exists before anyone can learn the id,
 * so every later step (a decision, a wait) finds it. Once per call key: the same call run again
 * answers the approval it recorded the first time.
 */
export async function requestApproval(
  deps: ApprovalDeps,
  input: RunContext & {
    callKey: string;
    tenantId: string;
    userId: string;
    call: ToolCallRequest;
    settings: TenantSettings;
    /** The tool's arguments as JSON Schema: its secret fields are redacted in the summary. */
    schema: Record<string, unknown> | undefined;
    account: { id: string; label: string; scope: 'user' | 'tenant' } | undefined;
  },
): Promise<ToolOutcome> {
  // Bounded per user (a looping agent): a re-run of a call already waiting still finds its approval.
  // Counted and created under the user's lock, so calls running side by side (a batch runs eight at
  // once, and several batches may run) cannot each see room for one more and all be created.
  const made = await inTransaction(deps.pool, async (tx) => {
    await lockKey(tx, `approvals:${input.tenantId}:${input.userId}`);
    const recorded = await getApprovalByCallKey(tx, input.callKey);
    if (
      !recorded &&
      (await countPendingApprovals(tx, { tenantId: input.tenantId, userId: input.userId })) >= MAX_PENDING_APPROVALS_PER_USER
    ) {
      return undefined;
    }
    return createApproval(tx, deps.keyring, {
      callKey: input.callKey,
      tenantId: input.tenantId,
      requesterUserId: input.userId,
      // The account is pinned: the approved call runs on the account the person saw, even if the
      // default account changes meanwhile.
      call: input.account ? { ...input.call, account: input.account.id } : input.call,
      accountId: input.account?.id ?? null,
      accountLabel: input.account?.label ?? null,
      accountScope: input.account?.scope ?? 'user',
      summary: approvalSummary(input.call.tool, input.account?.label ?? null, input.call.args ?? {}, input.schema),
      shownArguments: redactedArguments(input.call.args ?? {}, input.schema),
      ttlSec: approvalTtlSec(input.settings),
    });
  });
  if (!made) {
    return failure(
      'tool_failed',
      `${input.call.tool} needs approval, but ${MAX_PENDING_APPROVALS_PER_USER} of your calls already wait for one; nothing ran. Have some decided first.`,
    );
  }
  const { approval, created } = made;
  if (created) approvalEvents.inc({ event: 'requested' });
  return startAndAnswer(deps, approval, input);
}

/**
 * The answer of a call run again under a call key whose first run asked for approval (undefined
 * when it did not): the same approval_required, its workflow started should the first run have
 * stopped before it could.
 */
export async function approvalOfRerun(deps: ApprovalDeps, callKey: string, run: RunContext): Promise<ToolOutcome | undefined> {
  const approval = await getApprovalByCallKey(deps.pool, callKey);
  return approval && startAndAnswer(deps, approval, run);
}

async function startAndAnswer(deps: ApprovalDeps, approval: Approval, run: RunContext): Promise<ToolOutcome> {
  const workflowInput: ApprovalWorkflowInput = {
    approvalId: approval.id,
    tenantId: approval.tenantId,
    userId: approval.requesterUserId,
    tool: approval.tool,
    // The row's expiry decides; the timer ends no earlier.
    ttlSec: Math.max(1, Math.ceil((approval.expiresAt.getTime() - Date.now()) / 1000)),
    runTimeoutMs: run.timeoutMs + RUN_MARGIN_MS,
    ...(run.notifyWorkflowId && { notifyWorkflowId: run.notifyWorkflowId }),
  };
  try {
    await deps.temporal.withDeadline(Date.now() + START_TIMEOUT_MS, () =>
      deps.temporal.workflow.start('approvalWorkflow', {
        workflowId: approvalWorkflowId(approval.id),
        taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
        args: [workflowInput],
        typedSearchAttributes: [
          { key: SA.tenant, value: approval.tenantId },
          { key: SA.user, value: approval.requesterUserId },
          { key: SA.tool, value: [approval.tool] },
          { key: SA.outcome, value: 'PENDING' },
        ],
      }),
    );
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) {
      // Without its workflow nobody could ever run or expire it: it is cancelled, and the call did not run.
      deps.logger.error({ approvalId: approval.id, err: (err as Error).message }, 'could not start an approval workflow');
      await closeUndecidedApproval(deps.pool, approval.id, 'CANCELLED');
      return failure(
        'tool_failed',
        `${approval.tool} needs approval, but the approval could not be started right now; nothing ran. Try again shortly.`,
      );
    }
  }
  const url = approvalPageUrl(deps.config, approval.id);
  return failure(
    'approval_required',
    `${approval.tool} needs a person's approval before it runs; nothing ran yet. Give the user ${url} (they approve or deny it there), then call wait_for_approval with approvalId "${approval.id}".`,
    { approvalId: approval.id, url, summary: approval.summary },
  );
}
