import { needsApproval } from '../../../core/approval-policy.js';
import type { ToolOutcome } from '../../../core/execution.js';
import { inputJsonSchema } from '../../../core/json-schema.js';
import { requestApproval } from '../../approvals/prepare.js';
import { notifyWorkflowId } from './activity-context.js';
import type { ExecuteDeps, ToolCall } from './call.js';

/**
 * A call that needs a person's approval stops here, before it reaches the service: it is
 * recorded and its approval workflow started (features/approvals/prepare.ts); the answer is
 * approval_required. A declared tool is gated before its credential is even loaded; a listed one
 * once it is known. An approved call (RunOptions) passes.
 */
export async function approvalGate(deps: ExecuteDeps, call: ToolCall): Promise<ToolOutcome | undefined> {
  const { entry, account, input } = call;
  if (!entry || call.options.approved || !needsApproval(call.settings, entry)) return undefined;
  return requestApproval(deps, {
    callKey: input.callKey,
    tenantId: input.tenantId,
    userId: input.userId,
    call: input.call,
    settings: call.settings,
    schema: inputJsonSchema(entry.tool),
    account: account && { id: account.id, label: account.label, scope: account.scope },
    timeoutMs: input.timeoutMs,
    notifyWorkflowId: notifyWorkflowId(input),
  });
}
