import { setTimeout as sleep } from 'node:timers/promises';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { ElicitResultSchema, type ServerNotification, type ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Caller } from '../../../core/caller.js';
import type { ToolOutcome } from '../../../core/execution.js';
import { approvalAnswer } from '../../../features/approvals/answer.js';
import { getApprovalForRequester } from '../../../features/approvals/store/approvals.js';
import type { ServiceContext } from '../../../features/context.js';
import { metaEntry } from '../../../features/execution/tools/execute-tools.js';
import { ELICITATION_WAIT_SEC, ELICITATION_WAIT_WITH_PROGRESS_SEC, inElicitingSlot, type RequestProgress } from './connect-elicitation.js';

/**
 * URL elicitation for approvals (MCP 2025-11-25, "URL mode"): a call that answered
 * approval_required, from a client that declared `elicitation.url`, sends that client the approval
 * page (the portal checks who may decide, as it always does), watches the approval until a person
 * decides and the approved call has run, says `notifications/elicitation/complete`, and answers
 * the call's outcome in place of approval_required. Nothing is run again here: the approval
 * workflow runs the call, once. Undecided in time (or the client gone), the answer stays
 * approval_required, and wait_for_approval still works.
 */

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** What the client shows beside an approval page (both protocol eras). */
export const APPROVAL_MESSAGE =
  'A person must approve this call before it runs: open the link to see exactly what will run, then approve or deny it.';
const POLL_MS = 1_000;
const HEARTBEAT_MS = 10_000;

interface Pending {
  approvalId: string;
  url: string;
  /** Puts the settled answer where the approval_required entry was. */
  settle(outcome: { status: string; result?: ToolOutcome; reason?: string }): void;
}

/**
 * The approval_required entries of an execute_tools or connections_execute answer, each with how
 * to replace it (`flatNames`: execute_tools' tool names by index, as its entries are shaped by them).
 */
export function pendingApprovals(
  ctx: ServiceContext,
  tool: string,
  body: unknown,
  flatNames: readonly string[],
): { pending: Pending[]; answer: () => unknown } {
  if (tool === 'execute_tools') {
    const results = [...((body as { results?: unknown[] }).results ?? [])];
    const pending = results.flatMap((entry, i): Pending[] => {
      const e = entry as { error?: unknown; approvalId?: unknown; url?: unknown };
      if (e?.error !== 'APPROVAL_REQUIRED' || typeof e.approvalId !== 'string' || typeof e.url !== 'string') return [];
      return [
        {
          approvalId: e.approvalId,
          url: e.url,
          settle: ({ status, result }) => {
            results[i] = result ? metaEntry(ctx, flatNames[i] ?? '', result) : { ...e, approvalStatus: status };
          },
        },
      ];
    });
    return { pending, answer: () => ({ ...(body as object), results }) };
  }
  let answer = body;
  const e = (body as { ok?: unknown; error?: { code?: string; approvalId?: unknown; url?: unknown } }) ?? {};
  const pending: Pending[] =
    tool === 'connections_execute' && e.ok === false && e.error?.code === 'approval_required' && typeof e.error.approvalId === 'string'
      ? [
          {
            approvalId: e.error.approvalId,
            url: String(e.error.url),
            settle: ({ status, result }) => {
              answer = result ?? { ...e, error: { ...e.error, approvalStatus: status } };
            },
          },
        ]
      : [];
  return { pending, answer: () => answer };
}

/** Elicits each pending approval of the answer in turn; answers the answer with those settled in time replaced. */
export const hasPendingApproval = (ctx: ServiceContext, tool: string, body: unknown): boolean =>
  pendingApprovals(ctx, tool, body, []).pending.length > 0;

export async function approveByElicitation(
  ctx: ServiceContext,
  caller: Caller,
  tool: string,
  body: unknown,
  extra: Extra,
  progress: RequestProgress | undefined,
  flatNames: readonly string[],
): Promise<unknown> {
  return inElicitingSlot(ctx.config, caller, body, async () => {
    const { pending, answer } = pendingApprovals(ctx, tool, body, flatNames);
    for (const approval of pending) {
      if (extra.signal.aborted) break;
      void extra
        .sendRequest(
          {
            method: 'elicitation/create',
            params: {
              mode: 'url',
              elicitationId: approval.approvalId,
              url: approval.url,
              message: APPROVAL_MESSAGE,
            },
          },
          ElicitResultSchema,
          { timeout: (ELICITATION_WAIT_WITH_PROGRESS_SEC + 30) * 1000, signal: extra.signal },
        )
        .catch(() => {});
      const settled = await settledWithin(
        ctx,
        caller,
        approval.approvalId,
        progress ? ELICITATION_WAIT_WITH_PROGRESS_SEC : ELICITATION_WAIT_SEC,
        extra.signal,
        progress,
      );
      if (!settled) break;
      await extra
        .sendNotification({ method: 'notifications/elicitation/complete', params: { elicitationId: approval.approvalId } })
        .catch(() => {});
      approval.settle(settled);
    }
    return answer();
  });
}

/** Watches the approval (one read a second) until it is decided and, when approved, its call has an outcome. */
export async function settledWithin(
  ctx: ServiceContext,
  caller: Caller,
  approvalId: string,
  waitSec: number,
  signal: AbortSignal,
  progress: RequestProgress | undefined,
): Promise<{ status: string; result?: ToolOutcome } | undefined> {
  const until = Date.now() + waitSec * 1000;
  let nextBeat = Date.now() + HEARTBEAT_MS;
  while (Date.now() < until && !signal.aborted) {
    const approval = await getApprovalForRequester(ctx.pool, caller, approvalId);
    if (!approval) return undefined;
    const answer = await approvalAnswer(ctx, approval);
    if (answer.status === 'DENIED' || answer.status === 'EXPIRED' || answer.result) return answer;
    if (progress && Date.now() >= nextBeat) {
      progress.beat('waiting for a person to approve the call');
      nextBeat += HEARTBEAT_MS;
    }
    await sleep(POLL_MS, undefined, { signal }).catch(() => {});
  }
  return undefined;
}
