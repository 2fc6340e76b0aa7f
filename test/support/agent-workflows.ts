// An agent's own workflows for the tests of `switchboard/workflow` (run by startAgentWorker).
import { continueAsNew, workflowInfo } from '@temporalio/workflow';
import { type ExecuteOptions, switchboard, type ToolCallRequest, type ToolOutcome } from '../../surfaces/workflow-sdk/index.js';

export interface AgentInput {
  tenantId: string;
  userId: string;
  switchboardTaskQueue: string;
}

export interface ExecuteOnceInput extends AgentInput {
  call: ToolCallRequest;
  options?: ExecuteOptions;
}

/** One `execute`. */
export async function executeOnce(input: ExecuteOnceInput): Promise<ToolOutcome> {
  const sb = switchboard({ tenantId: input.tenantId, userId: input.userId, taskQueue: input.switchboardTaskQueue });
  return sb.execute(input.call, input.options);
}

/** One `execute`; when its result was cut, `readResult` slice by slice until the end: the whole text. */
export async function executeAndReadAll(
  input: ExecuteOnceInput & { sliceBytes: number },
): Promise<{ outcome: ToolOutcome; text?: string; slices: number }> {
  const sb = switchboard({ tenantId: input.tenantId, userId: input.userId, taskQueue: input.switchboardTaskQueue });
  const outcome = await sb.execute(input.call, input.options);
  if (!outcome.ok || !outcome.truncated || !outcome.resultRef) return { outcome, slices: 0 };
  let text = '';
  let slices = 0;
  for (let offset: number | null = 0; offset !== null; slices++) {
    const slice = await sb.readResult(outcome.resultRef, { offset, maxBytes: input.sliceBytes });
    text += slice.result as string;
    offset = slice.nextOffset;
  }
  return { outcome, text, slices };
}

export interface ExecuteManyInput extends ExecuteOnceInput {
  times: number;
  /** Carried across continue-as-new. */
  progress?: ExecuteManyProgress;
}

export interface ExecuteManyProgress {
  runs: number;
  done: number;
  truncated: number;
  /** The largest outcome (JSON bytes) and the largest history (bytes, as Temporal counts it) any run saw. */
  maxOutcomeBytes: number;
  maxHistoryBytes: number;
}

/**
 * An agent's loop as docs/reference/api.md advises it: `execute` `times` times, continuing as new whenever
 * Temporal suggests it (workflowInfo().continueAsNewSuggested), so no run's history nears its limits.
 */
export async function executeMany(input: ExecuteManyInput): Promise<ExecuteManyProgress> {
  const sb = switchboard({ tenantId: input.tenantId, userId: input.userId, taskQueue: input.switchboardTaskQueue });
  const progress = input.progress ?? { runs: 1, done: 0, truncated: 0, maxOutcomeBytes: 0, maxHistoryBytes: 0 };
  while (progress.done < input.times) {
    const outcome = await sb.execute(input.call, input.options);
    progress.done++;
    if (outcome.ok && outcome.truncated) progress.truncated++;
    progress.maxOutcomeBytes = Math.max(progress.maxOutcomeBytes, new TextEncoder().encode(JSON.stringify(outcome)).length);
    progress.maxHistoryBytes = Math.max(progress.maxHistoryBytes, workflowInfo().historySize);
    if (progress.done < input.times && workflowInfo().continueAsNewSuggested) {
      await continueAsNew<typeof executeMany>({ ...input, progress: { ...progress, runs: progress.runs + 1 } });
    }
  }
  return progress;
}
