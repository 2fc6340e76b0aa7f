import { ActivityFailure, proxyActivities, TimeoutFailure, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { ExecuteActivities, ExecuteToolInput } from '../activities/execute-tool.js';
import { BATCH_CONCURRENCY, failure, type ToolCallRequest, type ToolOutcome } from '../core/execution.js';
import { SA } from '../core/search-attributes.js';

/**
 * A batch of tool calls: one activity per call, at most eight at once, results index-aligned
 * with the request. One failure never aborts the others. Carries ids, tool names and
 * arguments — the activities look the credentials up.
 */

export interface ToolBatchCall extends ToolCallRequest {
  /** Read-only calls may be retried after a lost worker; side-effecting ones never are. */
  retryable: boolean;
}

export interface ToolBatchInput {
  tenantId: string;
  userId: string;
  calls: ToolBatchCall[];
  timeoutMs: number;
  maxResultBytes: number;
}

/** Room above the tool's own deadline for the credential lookup, a refresh and the audit write. */
const ACTIVITY_MARGIN_MS = 30_000;

export async function toolBatchWorkflow(input: ToolBatchInput): Promise<ToolOutcome[]> {
  const options = { startToCloseTimeout: input.timeoutMs + ACTIVITY_MARGIN_MS };
  const once = proxyActivities<ExecuteActivities>({ ...options, retry: { maximumAttempts: 1 } });
  const retrying = proxyActivities<ExecuteActivities>({ ...options, retry: { maximumAttempts: 3, initialInterval: '500 milliseconds' } });
  const audit = proxyActivities<ExecuteActivities>({ startToCloseTimeout: '30 seconds' });

  const { workflowId } = workflowInfo();
  const results: ToolOutcome[] = new Array(input.calls.length);

  const runOne = async (index: number): Promise<ToolOutcome> => {
    const call = input.calls[index];
    const activityInput: ExecuteToolInput = {
      callKey: `${workflowId}#${index}`,
      tenantId: input.tenantId,
      userId: input.userId,
      call: { tool: call.tool, args: call.args, account: call.account },
      timeoutMs: input.timeoutMs,
      maxResultBytes: input.maxResultBytes,
    };
    try {
      return await (call.retryable ? retrying : once).executeToolCall(activityInput);
    } catch (err) {
      // The activity never reported: its worker was lost or its time ran out. A write may or may
      // not have happened, so say so instead of retrying it.
      const timedOut = err instanceof ActivityFailure && err.cause instanceof TimeoutFailure;
      await audit.recordLostToolCall({ ...activityInput, errorCode: timedOut ? 'timeout' : 'tool_failed' });
      return timedOut
        ? failure('timeout', `${call.tool} did not report within its deadline; its outcome is unknown, so check before retrying a write.`)
        : failure('tool_failed', `${call.tool} was interrupted; its outcome is unknown, so check before retrying a write.`);
    }
  };

  let next = 0;
  const lane = async () => {
    while (next < input.calls.length) {
      const index = next++;
      results[index] = await runOne(index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(BATCH_CONCURRENCY, input.calls.length) }, lane));

  const failed = results.filter((r) => !r.ok).length;
  upsertSearchAttributes([{ key: SA.outcome, value: failed === 0 ? 'ok' : failed === results.length ? 'failed' : 'partial' }]);
  return results;
}
