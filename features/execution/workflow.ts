import { TimeoutType } from '@temporalio/common';
import {
  ActivityFailure,
  CancellationScope,
  patched,
  proxyActivities,
  proxyLocalActivities,
  TimeoutFailure,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { BATCH_CONCURRENCY, failure, outcomeUnknown, type ToolCallRequest } from '../../core/execution.js';
import { SA } from '../../core/search-attributes.js';
import { type CallOutcome, inlineResultLimit, RESULT_INLINE_MAX_BYTES } from '../../core/stored-results.js';
import type { ExecuteActivities, ExecuteToolInput } from './execute-tool.js';

/**
 * A batch of tool calls: one activity per call, at most eight at once, results index-aligned
 * with the request. One failure never aborts the others. Carries ids, tool names and
 * arguments — the activities look the credentials up.
 *
 * Large results are not carried: the activity stores them and answers a reference (the server
 * resolves it before answering), so every result of the largest accepted batch reaches its caller
 * and the batch's history stays bounded (the bound: core/stored-results.ts).
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
/**
 * Results above a few KB are stored outside history and the batch carries references, so what it
 * returns and records stays bounded (core/stored-results.ts states the bound). Batches that began
 * before this change keep carrying every result inline.
 */
const STORED_RESULTS_PATCH = 'stored-results';
/**
 * Cancelling a batch (an MCP task's tasks/cancel) stops it sending calls: those not yet sent
 * answer `cancelled`, those already sent finish and report their real outcome, and the batch
 * completes with every entry. Batches that began before this change are cancelled as before.
 */
const CANCEL_KEEPS_SENT_CALLS_PATCH = 'cancel-keeps-sent-calls';

/** A call as the batch carries it (kept as its own name so the batch's input can grow). */
type ToolBatchCall = ToolCallRequest;

interface ToolBatchInput {
  tenantId: string;
  userId: string;
  calls: ToolBatchCall[];
  timeoutMs: number;
  maxResultBytes: number;
  /** RESULT_INLINE_MAX_BYTES of the server that started the batch (absent in batches started before it existed). */
  resultInlineMaxBytes?: number;
  /**
   * The batch may be cancelled (it runs an MCP task): its calls run as normal activities. Local
   * ones all run inside one workflow task, where a cancel request is seen only after every call
   * was sent — and completing that task beside a new cancel request is refused, losing its results.
   */
  cancellable?: boolean;
}

/** Room above the tool's own deadline for the credential lookup, a refresh and the audit write. */
const ACTIVITY_MARGIN_MS = 30_000;
/** The activity heartbeats every second (see features/execution/execute-tool.ts). */
export const HEARTBEAT_TIMEOUT = '5 seconds';

export async function toolBatchWorkflow(input: ToolBatchInput): Promise<CallOutcome[]> {
  // A tool call never reaches a service twice: no automatic retries, even of reads. A local
  // activity whose workflow task is lost (its worker died; noticed at the workflow task timeout)
  // runs again on the next one: `claimFirst` makes that re-run answer "outcome unknown" instead
  // of reaching the service. (The normal activities of older batches heartbeat instead.)
  // Every patch is asked in the order batches have always asked them (a replay matches markers in order).
  const localPatched = patched(LOCAL_TOOL_CALLS_PATCH);
  const callKeyScoped = patched(RUN_SCOPED_CALL_KEYS_PATCH);
  const storedResults = patched(STORED_RESULTS_PATCH);
  const keepSentCalls = patched(CANCEL_KEEPS_SENT_CALLS_PATCH);
  // `cancellable` counts only where this code began the batch: a worker of the version before it
  // ignored the flag and ran local activities, and a replay of its history must run them again.
  const local = localPatched && !(input.cancellable && keepSentCalls);
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
  const callKeyPrefix = callKeyScoped ? `${workflowId}/${firstExecutionRunId}` : workflowId;
  const inlineResultMaxBytes = storedResults
    ? inlineResultLimit(input.calls.length, input.resultInlineMaxBytes ?? RESULT_INLINE_MAX_BYTES)
    : undefined;
  const results: CallOutcome[] = new Array(input.calls.length);
  let cancelled = false;
  if (keepSentCalls) {
    CancellationScope.current().cancelRequested.catch(() => {
      cancelled = true;
    });
  }

  const runOne = async (index: number): Promise<CallOutcome> => {
    const call = input.calls[index];
    const activityInput: ExecuteToolInput = {
      callKey: `${callKeyPrefix}#${index}`,
      tenantId: input.tenantId,
      userId: input.userId,
      call: { tool: call.tool, args: call.args, account: call.account },
      timeoutMs: input.timeoutMs,
      maxResultBytes: input.maxResultBytes,
      ...(local && { claimFirst: true }),
      ...(inlineResultMaxBytes !== undefined && { inlineResultMaxBytes }),
    };
    try {
      return await once.executeToolCall(activityInput);
    } catch (err) {
      // The activity never reported: its worker was lost or its time ran out. A write may or may
      // not have happened, so say so instead of retrying it.
      const cause = err instanceof ActivityFailure ? err.cause : undefined;
      const timedOut = cause instanceof TimeoutFailure && cause.timeoutType !== TimeoutType.HEARTBEAT;
      await audit.recordLostToolCall({ ...activityInput, errorCode: timedOut ? 'timeout' : 'outcome_unknown' });
      return outcomeUnknown(call.tool, timedOut);
    }
  };

  let next = 0;
  const lane = async () => {
    while (next < input.calls.length) {
      const index = next++;
      if (cancelled) {
        results[index] = failure('cancelled', `${input.calls[index].tool} was not sent: the batch was cancelled first.`);
        continue;
      }
      // Once sent, a call is seen through: cancelling cannot take back what reached the service.
      results[index] = keepSentCalls ? await CancellationScope.nonCancellable(() => runOne(index)) : await runOne(index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(BATCH_CONCURRENCY, input.calls.length) }, lane));

  const failed = results.filter((r) => !r.ok).length;
  upsertSearchAttributes([{ key: SA.outcome, value: failed === 0 ? 'ok' : failed === results.length ? 'failed' : 'partial' }]);
  return results;
}
