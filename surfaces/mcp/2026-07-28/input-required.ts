import { randomUUID } from 'node:crypto';
import { inputRequired, inputResponse, ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { Caller } from '../../../core/caller.js';
import { MetaToolError } from '../../../core/errors.js';
import { approvalAnswer } from '../../../features/approvals/answer.js';
import { getApprovalForRequester } from '../../../features/approvals/store/approvals.js';
import { getAttemptForCaller, isOpenAttempt } from '../../../features/connections/store/connection-attempts.js';
import { startConnection } from '../../../features/connections/tools/connect.js';
import type { ServiceContext } from '../../../features/context.js';
import { type MetaTool, runMetaTool } from '../../../features/meta-tool.js';
import { APPROVAL_MESSAGE, pendingApprovals, settledWithin } from '../2025-11-25/approval-elicitation.js';
import {
  connectedWithin,
  connectMessage,
  displayNameOf,
  ELICITATION_WAIT_SEC,
  ELICITATION_WAIT_WITH_PROGRESS_SEC,
  hasActiveAccount,
  inElicitingSlot,
  integrationsToConnect,
  type RequestProgress,
} from '../2025-11-25/connect-elicitation.js';
import { runAgain } from '../2025-11-25/url-elicitation.js';
import { callDigest, type FlowState, type HumanStep, MAX_HUMAN_STEPS, MAX_STEP_URL_CHARS } from './request-state.js';

/**
 * A 2026-07-28 tools/call from a client that declared URL elicitation, when its answer needs a
 * person — to connect an account, or to approve a call — answered the way that revision asks
 * servers to (multi round-trip requests): an `input_required` result naming the same user-bound
 * portal link (connect) or approval page that the 2025-11-25 flow sends as `elicitation/create`,
 * and a `requestState` the client sends back with its retry. A retry whose link the person
 * accepted waits (bounded, as the 2025 flow does) for the connection or decision; still open, it
 * answers `input_required` with the state alone, and the client asks again. Once every step has
 * settled, the call's answer: the recorded run (every round runs the call under one requestId,
 * so nothing runs twice), the entries that needed a connection run once more, approved calls'
 * outcomes in place of approval_required (the approval workflow ran them, once).
 *
 * No state is kept here between rounds: any process answers any round.
 */

/** The tools whose answers can need a person (the others answer as they always do). */
const HUMAN_STEP_TOOLS = new Set(['execute_tools', 'connections_execute']);

export const mayNeedPerson = (tool: MetaTool) => HUMAN_STEP_TOOLS.has(tool.name);

type RoundAnswer =
  | { kind: 'answer'; body: unknown }
  | { kind: 'input_required'; inputRequests: Record<string, ReturnType<typeof inputRequired.elicitUrl>>; state: FlowState };

interface Round {
  /** The state the client sent back (already verified by the SDK's hook), if this is a retry. */
  state: FlowState | undefined;
  /** The retry's inputResponses (untrusted: only their elicitation actions are read). */
  responses: Record<string, unknown> | undefined;
  signal: AbortSignal;
  progress: RequestProgress | undefined;
}

/** One round of the call. Throws a tool's MetaToolError as a direct call would. */
export async function callRound(
  ctx: ServiceContext,
  caller: Caller,
  tool: MetaTool,
  args: Record<string, unknown>,
  round: Round,
): Promise<RoundAnswer> {
  const call = callDigest(args);
  if (round.state && (round.state.tool !== tool.name || round.state.call !== call)) {
    // Another call's state (the SDK already refused other users' and edited ones).
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid or expired requestState: it belongs to another call');
  }
  const requestId = round.state?.requestId ?? (typeof args.requestId === 'string' ? args.requestId : `mcp-round:${randomUUID()}`);
  const state: FlowState = { v: 1, tool: tool.name, call, requestId, steps: (round.state?.steps ?? []).map((s) => ({ ...s })) };
  for (const step of state.steps) {
    if (step.answer !== 'asked') continue;
    const response = inputResponse(round.responses, step.key);
    if (response.kind === 'elicit') step.answer = response.action === 'accept' ? 'accepted' : 'declined';
  }

  let stillOpen = false;
  if (state.steps.some((s) => s.answer === 'accepted')) {
    const waited = await inElicitingSlot(ctx.config, caller, 'busy' as const, async () => {
      await waitForSteps(ctx, caller, state.steps, round);
      return 'waited' as const;
    });
    // The client left: nothing runs for a caller who is gone.
    if (round.signal.aborted) return { kind: 'input_required', inputRequests: {}, state };
    // 'busy': too many of this user's calls already wait on a person here; this one answers as it stands.
    stillOpen = waited === 'waited' && (await openSteps(ctx, caller, state.steps)).length > 0;
  }
  // Waiting goes on in the client's next round; a step it did not answer is asked again (the spec's advice).
  const unanswered = state.steps.filter((s) => s.answer === 'asked');
  if (stillOpen || unanswered.length > 0) return { kind: 'input_required', inputRequests: asks(ctx, unanswered), state };

  const runArgs = HUMAN_STEP_TOOLS.has(tool.name) ? { ...args, requestId } : args;
  let body = await runMetaTool(tool, ctx, caller, runArgs, { progress: round.progress && progressOf(round.progress) });
  const connected = await connectedIntegrations(ctx, caller, state.steps);
  if (connected.length > 0) body = await runAgain(ctx, caller, tool, runArgs, body, connected);
  const added = await newSteps(ctx, caller, tool, args, body, state.steps);
  if (added.length === 0) return { kind: 'answer', body };
  state.steps.push(...added);
  return {
    kind: 'input_required',
    inputRequests: asks(
      ctx,
      added.filter((s) => s.answer === 'asked'),
    ),
    state,
  };
}

const progressOf = (reporter: RequestProgress) => (done: number, total: number) =>
  reporter.report(done, total, `${done} of ${total} calls finished`);

function asks(ctx: ServiceContext, steps: readonly HumanStep[]) {
  return Object.fromEntries(
    steps.map((step) => [
      step.key,
      inputRequired.elicitUrl({
        url: step.url,
        message: step.kind === 'connect' ? connectMessage(displayNameOf(ctx, step.integration ?? '')) : APPROVAL_MESSAGE,
      }),
    ]),
  );
}

/**
 * What the answer still needs a person for that this call has not asked yet: integrations to
 * connect (a connection attempt each, bound to the caller) and approvals to decide. Not asked: a
 * call routed to a remote source (its integrations are not ours), integrations that cannot be
 * connected by link (API keys, built-ins, not configured), and anything past MAX_HUMAN_STEPS.
 */
async function newSteps(
  ctx: ServiceContext,
  caller: Caller,
  tool: MetaTool,
  args: Record<string, unknown>,
  body: unknown,
  steps: readonly HumanStep[],
): Promise<HumanStep[]> {
  const added: HumanStep[] = [];
  const room = () => steps.length + added.length < MAX_HUMAN_STEPS;
  const remote = typeof args.name === 'string' && args.name.includes(':');
  const tried = new Set(steps.map((s) => s.integration));
  for (const integration of remote ? [] : integrationsToConnect(tool.name, body)) {
    if (!room() || tried.has(integration) || !ctx.registry.get(integration)) continue;
    const key = `connect:${integration}`;
    if (await hasActiveAccount(ctx, caller, integration)) {
      // Connected since the run (another tab, a resent call): nothing to ask, the entries run again.
      added.push({ kind: 'connect', key, id: '', integration, url: '', answer: 'accepted' });
      continue;
    }
    try {
      const started = await startConnection(ctx, caller, integration);
      if (started.url.length > MAX_STEP_URL_CHARS) continue;
      added.push({ kind: 'connect', key, id: started.connectionId, integration, url: started.url, answer: 'asked' });
    } catch (err) {
      if (!(err instanceof MetaToolError)) throw err;
    }
  }
  const asked = new Set(steps.map((s) => s.id));
  for (const approval of pendingApprovals(ctx, tool.name, body, []).pending) {
    if (!room() || asked.has(approval.approvalId) || approval.url.length > MAX_STEP_URL_CHARS) continue;
    const current = await getApprovalForRequester(ctx.pool, caller, approval.approvalId);
    if (!current || (await approvalAnswer(ctx, current)).status !== 'PENDING') continue;
    added.push({ kind: 'approval', key: `approve:${approval.approvalId}`, id: approval.approvalId, url: approval.url, answer: 'asked' });
  }
  return added;
}

/** The accepted steps whose connection or decision has not come yet. */
async function openSteps(ctx: ServiceContext, caller: Caller, steps: readonly HumanStep[]): Promise<HumanStep[]> {
  const open = await Promise.all(
    steps.map(async (step) => {
      if (step.answer !== 'accepted' || !step.id) return false;
      if (step.kind === 'connect') {
        const attempt = await getAttemptForCaller(ctx.pool, caller, step.id);
        return attempt !== undefined && isOpenAttempt(attempt);
      }
      const approval = await getApprovalForRequester(ctx.pool, caller, step.id);
      if (!approval) return false;
      const answer = await approvalAnswer(ctx, approval);
      return answer.status === 'PENDING' || (answer.status === 'APPROVED' && !answer.result);
    }),
  );
  return steps.filter((_, i) => open[i]);
}

/** Waits (bounded, as a 2025-11-25 elicitation does) until the accepted steps settle, the client leaves, or time is up. */
async function waitForSteps(ctx: ServiceContext, caller: Caller, steps: readonly HumanStep[], round: Round): Promise<void> {
  const waitSec = round.progress ? ELICITATION_WAIT_WITH_PROGRESS_SEC : ELICITATION_WAIT_SEC;
  const open = await openSteps(ctx, caller, steps);
  await Promise.all(
    open.map((step) =>
      step.kind === 'connect'
        ? connectedWithin(ctx, caller, step.id, waitSec, round.signal, round.progress, displayNameOf(ctx, step.integration ?? ''))
        : settledWithin(ctx, caller, step.id, waitSec, round.signal, round.progress),
    ),
  );
}

/** The integrations of the connect steps the caller can use now. */
async function connectedIntegrations(ctx: ServiceContext, caller: Caller, steps: readonly HumanStep[]): Promise<string[]> {
  const connected = await Promise.all(
    steps.map(async (step) => {
      if (step.kind !== 'connect' || !step.integration) return false;
      if (!step.id) return true;
      return (await getAttemptForCaller(ctx.pool, caller, step.id))?.status === 'CONNECTED';
    }),
  );
  return steps.flatMap((s, i) => (connected[i] && s.integration ? [s.integration] : []));
}
