import { ApplicationFailure } from '@temporalio/activity';
import type { ApprovalWaitStatus } from '../../core/approvals.js';
import { MetaToolError } from '../../core/errors.js';
import type { ToolOutcome } from '../../core/execution.js';
import { ResultReadError } from '../../core/result-slices.js';
import { workflowResultLimit } from '../../core/stored-results.js';
import { toolAccessFor } from '../../core/tool-overrides.js';
import type { ToolAccess } from '../../providers/sdk/index.js';
import { getTenant } from '../accounts/store/tenants.js';
import type { ActivityDeps } from '../activity-deps.js';
import { approvalAnswer } from '../approvals/answer.js';
import { getApprovalForRequester } from '../approvals/store/approvals.js';
import { type PreparedConnection, prepareConnection } from '../connections/prepare.js';
import { type ReadResultRequest, type ResultSliceAnswer, readResultSlice } from '../results/read-result.js';

/** Activities behind `switchboard/workflow`: what an agent's own workflow asks Switchboard to do. */
export function createWorkflowHelperActivities(
  deps: Pick<ActivityDeps, 'pool' | 'keyring' | 'registry' | 'config' | 'signer' | 'temporal' | 'logger'>,
) {
  return {
    /**
     * `readResult` for a workflow: a slice of a cut result by its resultRef (as read_result).
     * An unknown (or foreign, or expired) reference or a bad offset or pointer will not change on a
     * retry: refused for good.
     */
    async readResult(input: { tenantId: string; userId: string } & ReadResultRequest): Promise<ResultSliceAnswer> {
      const { tenantId, userId, ...request } = input;
      try {
        const slice = await readResultSlice(deps.pool, deps.keyring, { tenantId, userId }, request);
        if (!slice) throw ApplicationFailure.nonRetryable('Unknown resultRef', 'SwitchboardUnknownResultRef');
        return slice;
      } catch (err) {
        if (err instanceof ResultReadError) throw ApplicationFailure.nonRetryable(err.message, 'SwitchboardReadResultRefused');
        throw err;
      }
    },

    /** `connect` for a workflow: the attempt and its link; the workflow starts the attempt's workflow as a child. */
    async prepareConnection(input: {
      tenantId: string;
      userId: string;
      integration: string;
      ttlSec?: number;
    }): Promise<PreparedConnection> {
      try {
        return await prepareConnection(deps, input, input.integration, { ttlSec: input.ttlSec });
      } catch (err) {
        // The spec's refusals (unknown, built-in, not configured) will not change on a retry.
        if (err instanceof MetaToolError) throw ApplicationFailure.nonRetryable(err.message, 'SwitchboardConnectRefused');
        throw err;
      }
    },

    /**
     * Whether a tool only reads (`read`), writes or destroys: an agent workflow repeats a
     * rate-limited call by itself only when it reads. Undefined for a name this deployment does not
     * know (a remote source's tool), which counts as a write. With `tenantId` (histories before it
     * lack it), that tenant's own upstream servers' tools are known too, and its overrides apply (a
     * tool it treats as read-only reads).
     */
    async toolAccess(input: { tool: string; tenantId?: string }): Promise<ToolAccess | undefined> {
      if (!input.tenantId) return deps.registry.toolByQualifiedName(input.tool)?.tool.access;
      const [registry, tenant] = await Promise.all([deps.registry.forTenant(input.tenantId), getTenant(deps.pool, input.tenantId)]);
      const entry = registry.toolByQualifiedName(input.tool);
      return entry && toolAccessFor(tenant?.settings ?? {}, entry);
    },

    /**
     * Where one of the workflow's approvals stands and, once its approved call ran, that call's
     * outcome (as execute answers it). Another user's id answers like an unknown one: refused for good.
     */
    async approvalOutcome(input: {
      tenantId: string;
      userId: string;
      approvalId: string;
    }): Promise<{ status: ApprovalWaitStatus; result?: ToolOutcome }> {
      const approval = await getApprovalForRequester(deps.pool, input, input.approvalId);
      if (!approval) throw ApplicationFailure.nonRetryable('Unknown approvalId', 'SwitchboardUnknownApproval');
      // The workflow carries the outcome inline: cut within what it can carry, like execute's.
      const limit = workflowResultLimit(deps.config.CONNECTIONS_TOOL_RESULT_MAX_BYTES);
      return approvalAnswer({ ...deps, config: { CONNECTIONS_TOOL_RESULT_MAX_BYTES: limit } }, approval);
    },
  };
}

export type WorkflowHelperActivities = ReturnType<typeof createWorkflowHelperActivities>;
