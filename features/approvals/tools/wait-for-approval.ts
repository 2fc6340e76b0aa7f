import { z } from 'zod';
import { APPROVAL_WAIT_DEFAULT_SEC, APPROVAL_WAIT_MAX_SEC, isSettled } from '../../../core/approvals.js';
import type { Caller } from '../../../core/caller.js';
import { MetaToolError } from '../../../core/errors.js';
import type { ToolOutcome } from '../../../core/execution.js';
import type { ServiceContext } from '../../context.js';
import { metaEntry } from '../../execution/tools/execute-tools.js';
import { defineMetaTool } from '../../meta-tool.js';
import { remoteWaitForApproval } from '../../sources/composite.js';
import { inWaitSlot } from '../../wait-slots.js';
import { approvalAnswer } from '../answer.js';
import { getApprovalForRequester } from '../store/approvals.js';

const input = z
  .object({
    approvalId: z.string().min(1).max(200),
    timeoutSec: z.number().int().positive().max(APPROVAL_WAIT_MAX_SEC).default(APPROVAL_WAIT_DEFAULT_SEC),
  })
  .strict();

const description = (shape: string) =>
  'Wait for a person to approve or deny a call that answered approval_required. Answers {status}: PENDING (no decision yet; ' +
  'wait again), APPROVED (the call ran once, by itself: result is its outcome, ' +
  shape +
  "; no result yet means it still runs), DENIED (it did not run; reason: the person's reason, when given) or EXPIRED (nobody decided in time; it did not run). " +
  `timeoutSec: positive integer, default ${APPROVAL_WAIT_DEFAULT_SEC}, max ${APPROVAL_WAIT_MAX_SEC}. Waiting never decides anything.`;

/**
 * Waits on the approval (its workflow's Update, woken by the decision; no polling) and answers its
 * status, with the approved call's outcome in `shape`. Only the requester's own approvals: another
 * user's id answers exactly like an unknown one.
 */
async function waitForApprovalOf(
  ctx: ServiceContext,
  caller: Caller,
  args: z.infer<typeof input>,
  shape: (tool: string, outcome: ToolOutcome) => unknown,
) {
  const found = await getApprovalForRequester(ctx.pool, caller, args.approvalId);
  if (!found) throw new MetaToolError({ error: 'Unknown approvalId' }, 404);
  if (!isSettled(found.status)) await inWaitSlot(ctx.config, caller, () => ctx.approvalWaiter.wait(found.id, args.timeoutSec));
  // Read after the wait: the row holds the decision and, once the call ran, its sealed outcome.
  const approval = (await getApprovalForRequester(ctx.pool, caller, found.id)) ?? found;
  const { status, result } = await approvalAnswer(ctx, approval);
  if (result) return { status, result: shape(approval.tool, result) };
  // A denial's reason, for the agent to pass on to its human.
  return status === 'DENIED' && approval.reason ? { status, reason: approval.reason } : { status };
}

/**
 * The answer of an approval a remote source holds (its id carries the source's prefix), in the
 * execute_tools entry shape the source answers; undefined for an approval held here.
 */
async function remoteAnswer(ctx: ServiceContext, caller: Caller, args: z.infer<typeof input>) {
  // A `<source>:` id is waited on at the source, this request held open meanwhile.
  const remote = args.approvalId.includes(':')
    ? await inWaitSlot(ctx.config, caller, () => remoteWaitForApproval(ctx, caller, args))
    : undefined;
  if (remote && remote.status !== 200) throw new MetaToolError(remote.body as { error: string }, remote.status);
  return remote?.body as ({ status: string; result?: { result?: unknown; error?: unknown } } & Record<string, unknown>) | undefined;
}

/** The nine-meta-tool surface (/mcp, the JSON API): result is an execute_tools entry, {result} or {error}. */
export const waitForApproval = defineMetaTool({
  name: 'wait_for_approval',
  description: description('shaped like an execute_tools entry ({result} or {error})'),
  input,
  async handler(ctx, caller, args) {
    return (
      (await remoteAnswer(ctx, caller, args)) ??
      waitForApprovalOf(ctx, caller, args, (tool, outcome) =>
        metaEntry(ctx, ctx.registry.toolByQualifiedName(tool)?.flatName ?? tool, outcome),
      )
    );
  },
});

/** The agent surface (/mcp/agent): result is shaped like connections_execute's answer, {ok, result} or {ok: false, error}. */
export const waitForApprovalAgent = defineMetaTool({
  name: 'wait_for_approval',
  description: description('shaped like a connections_execute answer ({ok, result} or {ok: false, error})'),
  input,
  async handler(ctx, caller, args) {
    const remote = await remoteAnswer(ctx, caller, args);
    if (!remote) return waitForApprovalOf(ctx, caller, args, (_tool, outcome) => outcome);
    const { result, ...rest } = remote;
    if (!result) return rest;
    // The source answers an execute_tools entry; the agent surface answers connections_execute's shape.
    const outcome =
      'result' in result
        ? { ok: true, result: result.result }
        : { ok: false, error: { code: 'tool_failed', message: String(result.error ?? 'failed').slice(0, 500) } };
    return { ...rest, result: outcome };
  },
});
