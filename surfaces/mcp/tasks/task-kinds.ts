import { WorkflowNotFoundError } from '@temporalio/client';
import { isSettled } from '../../../core/approvals.js';
import type { Caller } from '../../../core/caller.js';
import { MetaToolError } from '../../../core/errors.js';
import { waitAnswer } from '../../../core/wait-answer.js';
import { getApprovalForRequester } from '../../../features/approvals/store/approvals.js';
import { waitForApproval, waitForApprovalAgent } from '../../../features/approvals/tools/wait-for-approval.js';
import { getAttemptForCaller } from '../../../features/connections/store/connection-attempts.js';
import { waitForConnection } from '../../../features/connections/tools/wait-for-connection.js';
import type { ServiceContext } from '../../../features/context.js';
import { connectionsExecute } from '../../../features/execution/tools/connections-execute.js';
import { executeTools } from '../../../features/execution/tools/execute-tools.js';
import { type MetaTool, runMetaTool } from '../../../features/meta-tool.js';
import type { McpTaskOutcome, McpTaskRow } from '../store/mcp-tasks.js';

/**
 * What a task of each tool is, over the state that already makes the work durable: a call's tool
 * batch (a workflow), a connection attempt (its workflow and row), an approval (its workflow and
 * row). A kind starts the work, reads whether it has ended (any process, after any restart), and
 * cancels it.
 */
export interface TaskKind {
  tool: MetaTool;
  /** Milliseconds a client should leave between polls. */
  pollIntervalMs: number;
  /** The arguments the task keeps: a call gets a requestId, so collecting it never runs it twice. */
  prepare(args: Record<string, unknown>, taskRequestId: string): Record<string, unknown>;
  /**
   * Starts the work. `durable` settles once the work exists outside this process; `ended` settles
   * with the outcome when this process sees it end (undefined: not final here). A task whose work
   * ends before `durable` settles is durable once that outcome is recorded.
   */
  start(run: TaskRun): { durable: Promise<unknown>; ended: Promise<McpTaskOutcome | undefined> };
  /** The outcome if the work has ended, read from durable state; undefined while it works. */
  probe(run: TaskRun): Promise<McpTaskOutcome | undefined>;
  /** Stops the work where it can be stopped. */
  cancel(run: TaskRun): Promise<void>;
  /** What a cancelled task answers when its work leaves no outcome of its own (a wait). */
  cancelledOutcome?: McpTaskOutcome;
}

export interface TaskRun {
  ctx: ServiceContext;
  caller: Caller;
  row: McpTaskRow;
  args: Record<string, unknown>;
  /**
   * Records the tool batch behind the task (before `durable` settles); true when the task was
   * cancelled before there was a batch to stop.
   */
  onWorkflow?(workflowId: string): Promise<boolean>;
}

/** A MetaToolError (bad arguments, a refusal) is the call's answer; anything else is not final. */
async function outcomeOf(answer: Promise<unknown>): Promise<McpTaskOutcome | undefined> {
  try {
    return { body: await answer, isError: false };
  } catch (err) {
    // 503: Temporal was unavailable or slow, and the batch may still run: not an answer.
    if (err instanceof MetaToolError && err.status !== 503) return { body: err.body, isError: true };
    return undefined;
  }
}

/**
 * How long a task's creator may still be starting its batch (or, for a call routed to a remote
 * source, running it there) before its row names one: until then the row's silence is not an answer.
 */
const batchStartGraceMs = (ctx: ServiceContext) => ctx.config.CONNECTIONS_TOOL_TIMEOUT_MS + 60_000;

/** Stops a batch a task started (those are `cancellable`): a batch the task only joined runs on. */
async function cancelBatch(ctx: ServiceContext, workflowId: string): Promise<void> {
  const handle = ctx.temporal.workflow.getHandle(workflowId);
  // A batch the caller's own direct call started under the same requestId runs local activities,
  // whose results a cancel request would lose (features/execution/workflow.ts `cancellable`).
  const { memo } = await handle.describe();
  if (memo?.cancellable !== true) return;
  // The batch stops sending calls; those already sent finish (features/execution/workflow.ts).
  await handle.cancel();
}

/** execute_tools and connections_execute: the tool batch their requestId names. */
function batchKind(tool: MetaTool): TaskKind {
  return {
    tool,
    pollIntervalMs: 1000,
    prepare: (args, taskRequestId) => ({ ...args, requestId: typeof args.requestId === 'string' ? args.requestId : taskRequestId }),
    start({ ctx, caller, args, onWorkflow }) {
      let recordStarted: (recording: Promise<void>) => void = () => {};
      // Settles once the batch's workflow id is recorded with the task.
      const started = new Promise<void>((resolve) => {
        recordStarted = resolve;
      });
      const record = async (workflowId: string) => {
        try {
          if (await onWorkflow?.(workflowId)) await cancelBatch(ctx, workflowId);
        } catch (err) {
          // The batch runs all the same; a read after the start grace finds it by its requestId.
          ctx.logger.warn({ workflowId, err: (err as Error).message }, 'task batch not recorded, or not stopped after an early cancel');
        }
      };
      const answer = runMetaTool(tool, ctx, caller, args, {
        batch: { cancellable: true, onStarted: (workflowId) => recordStarted(record(workflowId)) },
      });
      // Durable once the batch exists; a call answered without one is durable once its answer is recorded.
      return { durable: started, ended: outcomeOf(answer) };
    },
    async probe({ ctx, caller, row, args }) {
      // No batch recorded yet, and its creator may still be starting it: not ended (a collect now
      // would find no batch and answer for good that there is none).
      if (!row.workflowId && row.ageMs < batchStartGraceMs(ctx)) return undefined;
      if (row.workflowId) {
        const running = await ctx.temporal.workflow
          .getHandle(row.workflowId)
          .describe()
          .then((d) => d.status.name === 'RUNNING')
          .catch((err) => {
            if (err instanceof WorkflowNotFoundError) return false;
            throw err;
          });
        if (running) return undefined;
      }
      // Ended (or never needed a batch): the same call again reads what it recorded, starting nothing.
      return outcomeOf(runMetaTool(tool, ctx, caller, args, { batch: { joinOnly: true } }));
    },
    async cancel({ ctx, row }) {
      // No batch yet: its creator stops it once recorded (setMcpTaskWorkflow answers it was cancelled).
      if (!row.workflowId) return;
      await cancelBatch(ctx, row.workflowId).catch(() => {});
    },
  };
}

const cancelledWait = (what: string): McpTaskOutcome => ({
  body: { error: `The task was cancelled before ${what}.` },
  isError: true,
});

/** wait_for_connection: the attempt's own status, CONNECTED or not. */
const connectionWaitKind: TaskKind = {
  tool: waitForConnection,
  pollIntervalMs: 2000,
  prepare: (args) => args,
  start(run) {
    const ended = connectionWaitKind.probe(run);
    return { durable: ended, ended };
  },
  async probe({ ctx, caller, args }) {
    const parsed = waitForConnection.input.safeParse(args);
    if (!parsed.success) return outcomeOf(runMetaTool(waitForConnection, ctx, caller, args));
    const attempt = await getAttemptForCaller(ctx.pool, caller, String(args.connectionId));
    // Another user's id answers exactly like an unknown one (as wait_for_connection does).
    if (!attempt) return { body: { error: 'Unknown connectionId' }, isError: true };
    if (attempt.status === 'PENDING') return undefined;
    return { body: { status: waitAnswer(attempt.status, { reapedIt: false }) }, isError: false };
  },
  async cancel({ ctx, caller, args }) {
    // Like a wait that runs out of time: the attempt expires and its link stops working.
    const attempt = await getAttemptForCaller(ctx.pool, caller, String(args.connectionId));
    if (attempt?.status === 'PENDING') await ctx.waiter.abandon(attempt.id);
  },
  cancelledOutcome: cancelledWait('the connection finished; the attempt is now expired'),
};

/** wait_for_approval (both shapes): the approval's decision and, once it ran, the call's outcome. */
function approvalWaitKind(tool: MetaTool): TaskKind {
  const kind: TaskKind = {
    tool,
    pollIntervalMs: 2000,
    prepare: (args) => args,
    start(run) {
      const ended = kind.probe(run);
      return { durable: ended, ended };
    },
    async probe({ ctx, caller, args }) {
      const id = String(args.approvalId ?? '');
      // Held here: undecided is read from the row without waiting. (A remote source's id, `<source>:…`, is asked there.)
      if (!id.includes(':')) {
        const found = await getApprovalForRequester(ctx.pool, caller, id);
        if (found && !isSettled(found.status)) return undefined;
      }
      const outcome = await outcomeOf(runMetaTool(tool, ctx, caller, { ...args, timeoutSec: 1 }));
      const body = outcome?.body as { status?: string; result?: unknown } | undefined;
      // PENDING, or approved and still running: not ended.
      if (!outcome || body?.status === 'PENDING' || (body?.status === 'APPROVED' && body.result === undefined)) return undefined;
      return outcome;
    },
    // Waiting never decides anything, and neither does stopping to wait: the approval stays as it is.
    cancel: async () => {},
    cancelledOutcome: cancelledWait('a decision was waited for; the approval itself is unchanged'),
  };
  return kind;
}

/** The tools that may run as tasks, by the key their rows keep (the agent surface's wait has its own). */
export const TASK_KINDS: ReadonlyMap<string, TaskKind> = new Map([
  ['execute_tools', batchKind(executeTools)],
  ['connections_execute', batchKind(connectionsExecute)],
  ['wait_for_connection', connectionWaitKind],
  ['wait_for_approval', approvalWaitKind(waitForApproval)],
  ['agent:wait_for_approval', approvalWaitKind(waitForApprovalAgent)],
]);

/** The key of a tool's task kind, or undefined when the tool cannot run as a task. */
export function taskKindKey(tool: MetaTool): string | undefined {
  for (const [key, kind] of TASK_KINDS) if (kind.tool === tool) return key;
  return undefined;
}
