/**
 * `switchboard/workflow`: helpers for an agent's own Temporal workflow. Workflow-safe only:
 * `@temporalio/workflow`, pure code from `core/`, and types — never pg, express or fetch.
 *
 *   const sb = switchboard({ tenantId, userId });
 *   const outcome = await sb.executeWithConnect(
 *     { tool: 'github__list_repos', args: {} },
 *     { onConnectUrl: 'sendConnectLink' },   // an activity of yours: email, chat, …
 *   );
 *
 * Switchboard's activities and its connection workflow run on Switchboard's task queue (a
 * worker with the SwitchboardPlugin); your workflow reaches them by name. A connection wait is
 * a child workflow: it lasts minutes or days, needs no polling and survives restarts of every
 * worker.
 */
import { TimeoutType } from '@temporalio/common';
import {
  ActivityFailure,
  type ActivityInterfaceFor,
  condition,
  isCancellation,
  ParentClosePolicy,
  patched,
  proxyActivities,
  setHandler,
  sleep,
  startChild,
  TimeoutFailure,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { ApprovalSummary } from '../../core/approval-summary.js';
import type { ApprovalStatus } from '../../core/approvals.js';
import { outcomeUnknown, type ToolCallRequest, type ToolOutcome } from '../../core/execution.js';
import { connectionWorkflowId } from '../../core/ids.js';
import { connectionSearchAttributes } from '../../core/search-attributes.js';
import { approvalSettledSignal } from '../../features/approvals/workflow.js';
import type { ConnectionWorkflowResult, connectionWorkflow } from '../../features/connections/workflow.js';
import type { ExecuteActivities, ExecuteToolInput } from '../../features/execution/execute-tool.js';
import { HEARTBEAT_TIMEOUT } from '../../features/execution/workflow.js';
import type { WorkflowHelperActivities } from '../../features/execution/workflow-helpers.js';
import type { ResultSliceAnswer } from '../../features/results/read-result.js';

export type { ApprovalSummary } from '../../core/approval-summary.js';
export type { ApprovalStatus, ApprovalWaitStatus } from '../../core/approvals.js';
export type { AttemptStatus, WaitStatus } from '../../core/connection.js';
export type { ToolCallRequest, ToolFailure, ToolOutcome } from '../../core/execution.js';
export { approvalWorkflowId, connectionWorkflowId, toolBatchWorkflowId } from '../../core/ids.js';
export { type ApprovalSettled, approvalSettledSignal } from '../../features/approvals/workflow.js';
export {
  type ConnectionOutcome,
  type ConnectionWorkflowInput,
  type ConnectionWorkflowResult,
  connectionResolvedSignal,
  connectionStatusQuery,
  waitForConnectionUpdate,
} from '../../features/connections/workflow.js';
export type { ResultSliceAnswer } from '../../features/results/read-result.js';

export interface SwitchboardOptions {
  /** Who the workflow acts for. Identity comes from here, never from tool arguments. */
  tenantId: string;
  userId: string;
  /** Switchboard's task queue (TEMPORAL_TASK_QUEUE of its worker). */
  taskQueue?: string;
  /** How long a connect link stays usable; a workflow may wait days. Default 7 days. */
  connectTtlSec?: number;
}

export interface PendingConnection {
  connectionId: string;
  type: 'oauth2' | 'cookie';
  /** Give it to the human; they open it in a browser. */
  url: string;
  /** Resolves when the human finished (CONNECTED) or the link expired (EXPIRED). */
  wait(): Promise<ConnectionWorkflowResult>;
}

/** What the connect-url callback activity receives. */
export interface ConnectUrlNotice {
  tenantId: string;
  userId: string;
  integration: string;
  connectionId: string;
  url: string;
  /** Why a connection is needed: the tool answered not_connected or needs_reauth. */
  reason: 'not_connected' | 'needs_reauth';
}

/** What the approval-url callback activity receives: a call waits for a person's approval. */
export interface ApprovalUrlNotice {
  tenantId: string;
  userId: string;
  tool: string;
  approvalId: string;
  /** Give it to the human (or an approver); they approve or deny the call there. */
  url: string;
  /** What will run, as the human sees it (secrets redacted). */
  summary?: ApprovalSummary;
  reason: 'approval_required';
}

export interface ExecuteOptions {
  /**
   * Name of one of your activities, called with an ApprovalUrlNotice when the call needs a
   * person's approval (for executeWithConnect, default its onConnectUrl). Either way the workflow
   * then waits durably for the decision (as long as the approval lives: a day by default, up to
   * 30 days) and answers the approved call's outcome — the call runs once, by Switchboard — or
   * the approval_required failure with approvalStatus DENIED or EXPIRED.
   */
  onApprovalUrl?: string;
  /** Task queue of that activity; default your workflow's own. */
  onApprovalUrlTaskQueue?: string;
  /** Read-only calls may be retried if a worker is lost; default false (never repeat a write). */
  retryable?: boolean;
  /**
   * How many `rate_limited` answers of a read to wait out before handing the answer back: each wait
   * is a durable timer of the answer's `retryAfterSec` (at least 1 s; no worker is held), then the
   * call runs again. Default 3; 0 never waits.
   */
  rateLimitRetries?: number;
  /** The most seconds one `execute` spends waiting out rate limits; a wait that would pass it is not started. Default 900. */
  maxRateLimitWaitSec?: number;
  /**
   * Wait out and repeat rate-limited writes too. Default false: a write (any tool whose access is
   * not `read`, or that this deployment does not know) is never repeated by itself.
   */
  retryWrites?: boolean;
}

export interface ExecuteWithConnectOptions extends ExecuteOptions {
  /**
   * Name of one of your activities, called with a ConnectUrlNotice — and with an ApprovalUrlNotice
   * (`reason: 'approval_required'`) when the call needs a person's approval, unless onApprovalUrl
   * names another activity.
   */
  onConnectUrl: string;
  /** Task queue of that activity; default your workflow's own. */
  onConnectUrlTaskQueue?: string;
  /** How many links to send before giving up (each one may expire). Default 3. */
  maxConnects?: number;
}

export const DEFAULT_RATE_LIMIT_RETRIES = 3;
/** While waiting for an approval, the database is asked this often too, should its settled signal have been lost. */
const APPROVAL_RECHECK_MS = 60 * 60 * 1000;

/**
 * Approvals that are settled (their workflows signal the one waiting), by workflow run and approval
 * id. Keyed by run: were this module preloaded into a reused V8 context (the SDK's preloadModules,
 * as Switchboard's own worker does with its workflows), one map would serve every workflow the
 * worker runs, and one workflow's signal must not end another's wait.
 */
const settledApprovals = new Map<string, ApprovalStatus>();
const settledKey = (approvalId: string) => `${workflowInfo().runId}/${approvalId}`;
const SIGNAL_CHECKED_PATCH = 'approval-signal-checked';
/** A call whose activity never reported answers "outcome unknown" (before: execute threw its ActivityFailure). */
const LOST_CALL_PATCH = 'sdk-lost-call-outcome';
export const DEFAULT_MAX_RATE_LIMIT_WAIT_SEC = 900;

export function switchboard(options: SwitchboardOptions) {
  const taskQueue = options.taskQueue ?? 'switchboard';
  const helpers = proxyActivities<WorkflowHelperActivities>({
    taskQueue,
    startToCloseTimeout: '1 minute',
    retry: { initialInterval: '1 second', maximumInterval: '1 minute', maximumAttempts: 10 },
  });
  const toolCall = (retryable: boolean) =>
    proxyActivities<ExecuteActivities>({
      taskQueue,
      // The tool's own deadline is enforced inside the activity; these only bound a lost worker.
      startToCloseTimeout: '10 minutes',
      heartbeatTimeout: HEARTBEAT_TIMEOUT,
      retry: { maximumAttempts: retryable ? 3 : 1 },
    });
  const audit = proxyActivities<ExecuteActivities>({ taskQueue, startToCloseTimeout: '30 seconds' });
  const caller = { tenantId: options.tenantId, userId: options.userId };
  const runOnce = (call: ToolCallRequest, opts: ExecuteOptions) => runToolOnce(toolCall(opts.retryable ?? false), audit, caller, call);
  const awaitApproval = (call: ToolCallRequest, outcome: ToolOutcome, notice?: ApprovalNoticeActivity) =>
    awaitSettledApproval(helpers, caller, call, outcome, notice);
  setHandler(approvalSettledSignal, ({ approvalId, status }) => {
    settledApprovals.set(settledKey(approvalId), status);
  });

  const connect = (integration: string): Promise<PendingConnection> =>
    startConnection(helpers, taskQueue, caller, integration, options.connectTtlSec ?? 7 * 24 * 3600);

  /**
   * Runs a tool. A read the service rate-limits is run again after a durable sleep until its reset
   * (see ExecuteOptions); a write only with `retryWrites`. Whether a tool reads is asked of
   * Switchboard (an activity) the first time it is rate-limited, so histories without a rate limit
   * carry the same commands as before.
   */
  async function execute(call: ToolCallRequest, opts: ExecuteOptions = {}): Promise<ToolOutcome> {
    const notice = opts.onApprovalUrl ? { activity: opts.onApprovalUrl, taskQueue: opts.onApprovalUrlTaskQueue } : undefined;
    let outcome = await awaitApproval(call, await runOnce(call, opts), notice);
    let waitedSec = 0;
    let repeatable: boolean | undefined;
    for (let retry = 0; retry < (opts.rateLimitRetries ?? DEFAULT_RATE_LIMIT_RETRIES); retry++) {
      if (outcome.ok || outcome.error.code !== 'rate_limited') break;
      const waitSec = Math.max(1, outcome.error.retryAfterSec ?? 1);
      if (waitedSec + waitSec > (opts.maxRateLimitWaitSec ?? DEFAULT_MAX_RATE_LIMIT_WAIT_SEC)) break;
      repeatable ??= opts.retryWrites === true || (await helpers.toolAccess({ tool: call.tool, tenantId: caller.tenantId })) === 'read';
      if (!repeatable) break;
      await sleep(waitSec * 1000);
      waitedSec += waitSec;
      outcome = await awaitApproval(call, await runOnce(call, opts), notice);
    }
    return outcome;
  }

  /**
   * Runs a tool; when it answers not_connected or needs_reauth, connects, hands the link to your
   * activity, waits (durably, as long as it takes) and runs the tool once connected.
   */
  async function executeWithConnect(call: ToolCallRequest, opts: ExecuteWithConnectOptions): Promise<ToolOutcome> {
    const notify = proxyActivities<Record<string, (notice: ConnectUrlNotice) => Promise<void>>>({
      taskQueue: opts.onConnectUrlTaskQueue ?? workflowInfo().taskQueue,
      startToCloseTimeout: '1 minute',
      retry: { maximumAttempts: 5 },
    });
    // An approval's link goes to the same activity as a connect link, unless another is named.
    const withApproval = {
      ...opts,
      onApprovalUrl: opts.onApprovalUrl ?? opts.onConnectUrl,
      onApprovalUrlTaskQueue: opts.onApprovalUrlTaskQueue ?? opts.onConnectUrlTaskQueue,
    };
    let outcome = await execute(call, withApproval);
    for (let sent = 0; sent < (opts.maxConnects ?? 3); sent++) {
      if (outcome.ok || (outcome.error.code !== 'not_connected' && outcome.error.code !== 'needs_reauth')) return outcome;
      const reason = outcome.error.code;
      const integration = outcome.error.integration ?? call.tool.split('__')[0];
      const pending = await connect(integration);
      await notify[opts.onConnectUrl]({ ...caller, integration, connectionId: pending.connectionId, url: pending.url, reason });
      const { status } = await pending.wait();
      if (status === 'CONNECTED') outcome = await execute(call, withApproval);
    }
    return outcome;
  }

  /**
   * Reads on in a result `execute` cut (`truncated: true`), by its `resultRef`: the next slice of
   * its JSON text from `offset` (bytes; pass the previous answer's `nextOffset`, null at the end),
   * at most `maxBytes` (default 32768, max 262144), optionally only the parts `select`'s JSON
   * pointers name. Each slice is one activity result, so your history grows by what you read.
   * An unknown, foreign or expired reference fails with a non-retryable `SwitchboardUnknownResultRef`.
   */
  async function readResult(
    resultRef: string,
    opts: { offset?: number; maxBytes?: number; select?: string[] } = {},
  ): Promise<ResultSliceAnswer> {
    return helpers.readResult({ ...caller, resultRef, offset: opts.offset, maxBytes: opts.maxBytes ?? 32768, select: opts.select });
  }

  return { connect, execute, executeWithConnect, readResult };
}

/** Whose run it is: every activity the helpers call is asked as this caller. */
interface Caller {
  tenantId: string;
  userId: string;
}

/** The activity of yours that is handed an approval's link. */
interface ApprovalNoticeActivity {
  activity: string;
  taskQueue?: string;
}

// No inlineResultMaxBytes: the result comes inline (one call's is at most the result limit, and
// at most WORKFLOW_RESULT_MAX_BYTES), never as a stored reference; a cut one names its resultRef.
async function runToolOnce(
  execute: ActivityInterfaceFor<ExecuteActivities>,
  audit: ActivityInterfaceFor<ExecuteActivities>,
  caller: Caller,
  call: ToolCallRequest,
): Promise<ToolOutcome> {
  const input: ExecuteToolInput = {
    callKey: `${workflowInfo().workflowId}#${uuid4()}`,
    ...caller,
    call,
    // A gated call's approval signals this workflow once it is settled.
    notifyApproval: true,
  };
  try {
    return (await execute.executeToolCall(input)) as ToolOutcome;
  } catch (err) {
    // The activity never reported (its worker was lost, its time ran out): the call may or may not
    // have reached the service, so the answer says so — as a tool batch's does — instead of failing
    // the workflow. Histories from before LOST_CALL_PATCH keep the exception they had.
    if (!(err instanceof ActivityFailure) || isCancellation(err) || !patched(LOST_CALL_PATCH)) throw err;
    const cause = err.cause;
    const timedOut = cause instanceof TimeoutFailure && cause.timeoutType !== TimeoutType.HEARTBEAT;
    await audit.recordLostToolCall({ ...input, errorCode: timedOut ? 'timeout' : 'outcome_unknown' });
    return outcomeUnknown(call.tool, timedOut);
  }
}

/**
 * A call that answered approval_required: tells the human (the notice activity, when named),
 * waits durably until the approval is settled — woken by its workflow's signal, with an hourly
 * look at the database in case a signal was lost — and answers the approved call's outcome, or
 * the approval_required failure with the approval's final status.
 */
async function awaitSettledApproval(
  helpers: ActivityInterfaceFor<WorkflowHelperActivities>,
  caller: Caller,
  call: ToolCallRequest,
  outcome: ToolOutcome,
  notice?: ApprovalNoticeActivity,
): Promise<ToolOutcome> {
  if (outcome.ok || outcome.error.code !== 'approval_required' || !outcome.error.approvalId) return outcome;
  const { approvalId, url, summary } = outcome.error;
  if (notice) {
    const notify = proxyActivities<Record<string, (n: ApprovalUrlNotice) => Promise<void>>>({
      taskQueue: notice.taskQueue ?? workflowInfo().taskQueue,
      startToCloseTimeout: '1 minute',
      retry: { maximumAttempts: 5 },
    });
    await notify[notice.activity]({ ...caller, tool: call.tool, approvalId, url: url ?? '', summary, reason: 'approval_required' });
  }
  // The approval's workflow signals once it is settled (its call ran, or never will). Waits begun
  // after SIGNAL_CHECKED_PATCH believe a signal only when the database agrees: a stray one (anyone
  // who can reach the namespace may signal) does not end the wait early.
  const checked = patched(SIGNAL_CHECKED_PATCH);
  const settled = (a: { status: string; result?: unknown }) => a.status !== 'PENDING' && (a.status !== 'APPROVED' || !!a.result);
  for (;;) {
    const signalled = await condition(() => settledApprovals.has(settledKey(approvalId)), APPROVAL_RECHECK_MS);
    if (signalled && !checked) break;
    if (settled(await helpers.approvalOutcome({ ...caller, approvalId }))) break;
    settledApprovals.delete(settledKey(approvalId));
  }
  const answer = await helpers.approvalOutcome({ ...caller, approvalId });
  if (answer.result) return answer.result;
  return { ok: false, error: { ...outcome.error, approvalStatus: answer.status } };
}

/** Starts a connection attempt (its own workflow, which outlives this one) and answers its link and a wait for it. */
async function startConnection(
  helpers: ActivityInterfaceFor<WorkflowHelperActivities>,
  taskQueue: string,
  caller: Caller,
  integration: string,
  ttlSec: number,
): Promise<PendingConnection> {
  const prepared = await helpers.prepareConnection({ ...caller, integration, ttlSec });
  const child = await startChild<typeof connectionWorkflow>('connectionWorkflow', {
    workflowId: connectionWorkflowId(prepared.connectionId),
    taskQueue,
    args: [{ attemptId: prepared.connectionId, ...caller, integration, ttlSec: prepared.ttlSec }],
    // The attempt outlives this workflow if it ends first; the human's link keeps working.
    parentClosePolicy: ParentClosePolicy.ABANDON,
    typedSearchAttributes: connectionSearchAttributes(caller, integration),
  });
  return { connectionId: prepared.connectionId, type: prepared.type, url: prepared.url, wait: () => child.result() };
}
