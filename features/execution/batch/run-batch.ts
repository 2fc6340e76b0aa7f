import { randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import type { Caller } from '../../../core/caller.js';
import { MetaToolError } from '../../../core/errors.js';
import { BATCH_CONCURRENCY, failure, type ToolCallRequest, type ToolOutcome } from '../../../core/execution.js';
import { toolBatchWorkflowId } from '../../../core/ids.js';
import { SA, toolAttributeValues } from '../../../core/search-attributes.js';
import type { ServiceContext } from '../../context.js';
import type { BatchHooks } from '../../meta-tool.js';
import { toolBatchWorkflow } from '../workflow.js';
import { resolveApprovalEntries } from './approval-outcomes.js';
import { type BatchProgress, followBatchProgress } from './batch-progress.js';
import { chargeCalls } from './call-limits.js';
import { idempotentBatchId } from './idempotency.js';
import { resolveStoredResults } from './resolve-results.js';
import { callsForHistory } from './seal-arguments.js';

/** How long the caller waits past the batch's own worst case before being told to collect later. */
const COLLECT_GRACE_MS = 30_000;
/** Starting the batch is one short RPC: bounded on its own, so an unreachable Temporal answers 503 promptly. */
export const START_TIMEOUT_MS = 5_000;

/**
 * Runs calls (qualified names) as one tool-batch workflow and answers the outcomes,
 * index-aligned. With a `requestId`, the batch id is derived from it: the same request again
 * joins or reads the recorded batch and runs nothing twice (for as long as Temporal retains it;
 * after that the id starts a new run, whose calls have keys of their own). The same requestId
 * with other calls answers 409.
 */
export async function runToolBatch(
  ctx: ServiceContext,
  caller: Caller,
  calls: ToolCallRequest[],
  options: { requestId?: string; progress?: BatchProgress } & BatchHooks = {},
): Promise<ToolOutcome[]> {
  if (calls.length === 0) return [];
  const recorded = options.requestId ? await idempotentBatchId(ctx, caller, calls, options.requestId) : undefined;
  const batchId = recorded?.batchId ?? randomUUID();
  const workflowId = toolBatchWorkflowId(batchId);
  // Joining or collecting a batch this request already started runs nothing, so it spends no
  // budget (a client retrying after a dropped connection still gets its results). Anything that
  // may start a run is charged first.
  const exists = recorded?.seen === 'same' && (await batchExists(ctx, workflowId));
  if (options.joinOnly && !exists) {
    throw new MetaToolError({ error: 'This batch is no longer kept (past its retention), so its results cannot be read again.' }, 410);
  }
  if (!exists) await chargeCalls(ctx, caller, calls.length);
  const { config } = ctx;
  const tools = toolAttributeValues(
    calls.map((c) => c.tool),
    (name) => ctx.registry.toolByQualifiedName(name) !== undefined,
  );
  const input = {
    tenantId: caller.tenantId,
    userId: caller.userId,
    calls: await callsForHistory(ctx, caller, calls),
    timeoutMs: config.CONNECTIONS_TOOL_TIMEOUT_MS,
    maxResultBytes: config.CONNECTIONS_TOOL_RESULT_MAX_BYTES,
    resultInlineMaxBytes: config.RESULT_INLINE_MAX_BYTES,
    ...(options.cancellable && { cancellable: true }),
  };
  const rounds = Math.ceil(calls.length / BATCH_CONCURRENCY);
  const deadline = Date.now() + rounds * (config.CONNECTIONS_TOOL_TIMEOUT_MS + 30_000) + COLLECT_GRACE_MS;

  try {
    return await ctx.temporal.withDeadline(deadline, async () => {
      let handle: WorkflowHandle<typeof toolBatchWorkflow>;
      try {
        const start = () =>
          ctx.temporal.workflow.start(toolBatchWorkflow, {
            workflowId,
            taskQueue: config.TEMPORAL_TASK_QUEUE,
            args: [input],
            workflowIdReusePolicy: 'REJECT_DUPLICATE',
            workflowIdConflictPolicy: 'USE_EXISTING',
            requestEagerStart: ctx.eagerStart,
            // A task may stop only a batch it started itself (surfaces/mcp/tasks/task-kinds.ts).
            ...(options.cancellable && { memo: { cancellable: true } }),
            typedSearchAttributes: [
              { key: SA.tenant, value: caller.tenantId },
              { key: SA.user, value: caller.userId },
              // An empty list would be stored as one empty name.
              ...(tools.length ? [{ key: SA.tool, value: tools }] : []),
            ],
          });
        // A task collecting its batch never starts one: only the run its requestId started is read.
        handle = options.joinOnly
          ? ctx.temporal.workflow.getHandle<typeof toolBatchWorkflow>(workflowId)
          : await ctx.temporal.withDeadline(Date.now() + START_TIMEOUT_MS, start);
      } catch (err) {
        // A finished batch with this request id: read its recorded results.
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
        handle = ctx.temporal.workflow.getHandle<typeof toolBatchWorkflow>(workflowId);
      }
      options.onStarted?.(workflowId);
      const following = options.progress && (await followBatch(ctx, handle, calls.length, options.progress));
      try {
        const outcomes = await resolveStoredResults(ctx, caller, calls, await handle.result());
        return recorded?.seen === 'same' ? await resolveApprovalEntries(ctx, caller, outcomes) : outcomes;
      } catch (err) {
        if (!(err instanceof WorkflowFailedError)) throw err;
        return await endedBatchOutcomes(ctx, handle, calls);
      } finally {
        following?.stop();
      }
    });
  } catch (err) {
    if (err instanceof MetaToolError) throw err;
    ctx.logger.error({ workflowId, err: (err as Error).message }, 'tool batch failed');
    const hint = options.requestId ? ' Send the same requestId again to collect its results.' : '';
    throw new MetaToolError({ error: `The tool batch could not be completed right now (Temporal unavailable or slow).${hint}` }, 503);
  }
}

/**
 * Progress of the batch's calls, by their keys (features/execution/workflow.ts: `<workflowId>/<first run
 * id>#<index>`). A batch this request joined has no run id at hand: one describe gives it.
 */
async function followBatch(ctx: ServiceContext, handle: WorkflowHandle, total: number, progress: BatchProgress) {
  const started = 'firstExecutionRunId' in handle ? (handle.firstExecutionRunId as string) : undefined;
  const runId = started ?? (await handle.describe().catch(() => undefined))?.runId;
  if (!runId) return undefined;
  const keys = Array.from({ length: total }, (_, i) => `${handle.workflowId}/${runId}#${i}`);
  return followBatchProgress(ctx.pool, keys, progress);
}

/** Whether Temporal still has a batch with this id (a failed lookup counts as no, so it is charged). */
async function batchExists(ctx: ServiceContext, workflowId: string): Promise<boolean> {
  try {
    await ctx.temporal.withDeadline(Date.now() + START_TIMEOUT_MS, () => ctx.temporal.workflow.getHandle(workflowId).describe());
    return true;
  } catch {
    return false;
  }
}

/**
 * A batch that ended without results (an operator terminated it, or it failed or timed out) has
 * this recorded state for good: each call's outcome is unknown. Answered as such, per call,
 * instead of a 503 that invites retrying the same requestId forever.
 */
async function endedBatchOutcomes(ctx: ServiceContext, handle: WorkflowHandle, calls: ToolCallRequest[]): Promise<ToolOutcome[]> {
  const { status } = await handle.describe();
  const ended = status.name.toLowerCase().replace('_', ' '); // terminated, failed, timed out, cancelled
  ctx.logger.warn({ workflowId: handle.workflowId, status: status.name }, 'tool batch ended without results');
  return calls.map((call) =>
    failure(
      'outcome_unknown',
      `The batch running ${call.tool} ended (${ended}) before the call reported; its outcome is unknown, so check before ` +
        'retrying a write. Send a new requestId to run it again.',
    ),
  );
}
