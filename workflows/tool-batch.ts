import { TimeoutType } from '@temporalio/common';
import {
  ActivityFailure,
  patched,
  proxyActivities,
  proxyLocalActivities,
  TimeoutFailure,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { ExecuteActivities, ExecuteToolInput } from '../activities/execute-tool.js';
import { BATCH_CONCURRENCY, outcomeUnknown, type ToolCallRequest, type ToolOutcome } from '../core/execution.js';
import { SA } from '../core/search-attributes.js';

/**
 * A batch of tool calls: one activity per call, at most eight at once, results index-aligned
 * with the request. One failure never aborts the others. Carries ids, tool names and
 * arguments — the activities look the credentials up.
 *
 * The calls run as local activities: in the worker that runs the batch's workflow task, with no
 * trip through Temporal's task queues per call (see bench/README.md). Batches recorded
 * before that change (no `local-tool-calls` marker in their history) replay with normal ones.
 */

const LOCAL_TOOL_CALLS_PATCH = 'local-tool-calls';
/**
 * Call keys name the run too: once Temporal's retention has deleted a batch, its request id may
 * start a new run, whose calls must not find the old run's claims ("outcome unknown" forever).
 * Batches that began before this change keep their old keys, so a re-run of one of their calls
 * still finds its claim.
 */
const RUN_SCOPED_CALL_KEYS_PATCH = 'run-scoped-call-keys';

/** A call as the batch carries it (kept as its own name so the batch's input can grow). */
export type ToolBatchCall = ToolCallRequest;

export interface ToolBatchInput {
  tenantId: string;
  userId: string;
  calls: ToolBatchCall[];
  timeoutMs: number;
  maxResultBytes: number;
}

/** Room above the tool's own deadline for the credential lookup, a refresh and the audit write. */
const ACTIVITY_MARGIN_MS = 30_000;
/** The activity heartbeats every second (see activities/execute-tool.ts). */
export const HEARTBEAT_TIMEOUT = '5 seconds';

export async function toolBatchWorkflow(input: ToolBatchInput): Promise<ToolOutcome[]> {
  // A tool call never reaches a service twice: no automatic retries, even of reads. A local
  // activity whose workflow task is lost (its worker died; noticed at the workflow task timeout)
  // runs again on the next one: `claimFirst` makes that re-run answer "outcome unknown" instead
  // of reaching the service. (The normal activities of older batches heartbeat instead.)
  const local = patched(LOCAL_TOOL_CALLS_PATCH);
  const once = local
    ? proxyLocalActivities<ExecuteActivities>({ startToCloseTimeout: input.timeoutMs + ACTIVITY_MARGIN_MS, retry: { maximumAttempts: 1 } })
    : proxyActivities<ExecuteActivities>({
        startToCloseTimeout: input.timeoutMs + ACTIVITY_MARGIN_MS,
        heartbeatTimeout: HEARTBEAT_TIMEOUT,
        retry: { maximumAttempts: 1 },
      });
  const audit = proxyActivities<ExecuteActivities>({ startToCloseTimeout: '30 seconds' });

  // The first run of this execution chain: a new start after retention deleted the batch gets a
  // new one (its calls run anew), while a reset keeps it (calls it already made are found claimed,
  // never made twice). For a run that was never reset it is the run's own id.
  const { workflowId, firstExecutionRunId } = workflowInfo();
  const callKeyPrefix = patched(RUN_SCOPED_CALL_KEYS_PATCH) ? `${workflowId}/${firstExecutionRunId}` : workflowId;
  const results: ToolOutcome[] = new Array(input.calls.length);

  const runOne = async (index: number): Promise<ToolOutcome> => {
    const call = input.calls[index];
    const activityInput: ExecuteToolInput = {
      callKey: `${callKeyPrefix}#${index}`,
      tenantId: input.tenantId,
      userId: input.userId,
      call: { tool: call.tool, args: call.args, account: call.account },
      timeoutMs: input.timeoutMs,
      maxResultBytes: input.maxResultBytes,
      ...(local && { claimFirst: true }),
    };
    try {
      return await once.executeToolCall(activityInput);
    } catch (err) {
      // The activity never reported: its worker was lost or its time ran out. A write may or may
      // not have happened, so say so instead of retrying it.
      const cause = err instanceof ActivityFailure ? err.cause : undefined;
      const timedOut = cause instanceof TimeoutFailure && cause.timeoutType !== TimeoutType.HEARTBEAT;
      await audit.recordLostToolCall({ ...activityInput, errorCode: timedOut ? 'timeout' : 'tool_failed' });
      return outcomeUnknown(call.tool, timedOut);
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
