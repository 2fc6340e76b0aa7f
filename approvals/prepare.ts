import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import { approvalTtlSec } from '../core/approval-policy.js';
import { approvalSummary } from '../core/approval-summary.js';
import { approvalPageUrl } from '../core/approvals.js';
import type { Config } from '../core/config.js';
import { failure, type ToolCallRequest, type ToolOutcome } from '../core/execution.js';
import { approvalWorkflowId } from '../core/ids.js';
import type { TenantSettings } from '../core/policy.js';
import { SA } from '../core/search-attributes.js';
import { closeUndecidedApproval, createApproval } from '../store/approvals.js';
import type { Pool } from '../store/database.js';
import type { Keyring } from '../store/keyring.js';
import type { ApprovalWorkflowInput } from './workflow.js';

export type ApprovalDeps = { pool: Pool; keyring: Keyring; temporal: Client; config: Config; logger: Logger };

/** Room above the tool's own deadline for the credential lookup, a refresh and the audit write (as a batch has). */
const RUN_MARGIN_MS = 30_000;

/**
 * A call that needs approval does not run: this records it (arguments sealed, a summary without
 * secrets), starts its `approval-<id>` workflow, and answers `approval_required` with the id, the
 * portal page for the human and the summary. The workflow exists before anyone can learn the id,
 * so every later step (a decision, a wait) finds it.
 */
export async function requestApproval(
  deps: ApprovalDeps,
  input: {
    tenantId: string;
    userId: string;
    call: ToolCallRequest;
    settings: TenantSettings;
    /** The tool's arguments as JSON Schema: its secret fields are redacted in the summary. */
    schema: Record<string, unknown> | undefined;
    account: { id: string; label: string } | undefined;
    timeoutMs: number;
    notifyWorkflowId?: string;
  },
): Promise<ToolOutcome> {
  const ttlSec = approvalTtlSec(input.settings);
  const summary = approvalSummary(input.call.tool, input.account?.label ?? null, input.call.args ?? {}, input.schema);
  const approval = await createApproval(deps.pool, deps.keyring, {
    tenantId: input.tenantId,
    requesterUserId: input.userId,
    call: input.call,
    accountId: input.account?.id ?? null,
    accountLabel: input.account?.label ?? null,
    summary,
    ttlSec,
  });
  const workflowInput: ApprovalWorkflowInput = {
    approvalId: approval.id,
    tenantId: input.tenantId,
    userId: input.userId,
    tool: input.call.tool,
    ttlSec,
    runTimeoutMs: input.timeoutMs + RUN_MARGIN_MS,
    ...(input.notifyWorkflowId && { notifyWorkflowId: input.notifyWorkflowId }),
  };
  try {
    await deps.temporal.withDeadline(Date.now() + 10_000, () =>
      deps.temporal.workflow.start('approvalWorkflow', {
        workflowId: approvalWorkflowId(approval.id),
        taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
        args: [workflowInput],
        typedSearchAttributes: [
          { key: SA.tenant, value: input.tenantId },
          { key: SA.user, value: input.userId },
          { key: SA.tool, value: [input.call.tool] },
          { key: SA.outcome, value: 'PENDING' },
        ],
      }),
    );
  } catch (err) {
    // Without its workflow nobody could ever run or expire it: it is cancelled, and the call did not run.
    deps.logger.error({ approvalId: approval.id, err: (err as Error).message }, 'could not start an approval workflow');
    await closeUndecidedApproval(deps.pool, approval.id, 'CANCELLED');
    return failure(
      'tool_failed',
      `${input.call.tool} needs approval, but the approval could not be started right now; nothing ran. Try again shortly.`,
    );
  }
  const url = approvalPageUrl(deps.config, approval.id);
  return failure(
    'approval_required',
    `${input.call.tool} needs a person's approval before it runs; nothing ran yet. Give the user ${url} (they approve or deny it there), then call wait_for_approval with approvalId "${approval.id}".`,
    { approvalId: approval.id, url, summary },
  );
}
