import { createHash } from 'node:crypto';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { type ServerNotification, type ServerRequest, UrlElicitationRequiredError } from '@modelcontextprotocol/sdk/types.js';
import type { Caller } from '../../../core/caller.js';
import type { ServiceContext } from '../../../features/context.js';
import { type MetaTool, runMetaTool } from '../../../features/meta-tool.js';
import { approveByElicitation, hasPendingApproval } from './approval-elicitation.js';
import {
  connectByElicitation,
  connectLinks,
  elicitingSlotsFull,
  integrationsToConnect,
  nothingRan,
  type RequestProgress,
} from './connect-elicitation.js';

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * A tool call's answer for a client that declared URL elicitation: the integrations it found
 * unconnected are connected through the client's browser (then what needed them runs again), and
 * approval pages are shown the same way (the approval workflow runs the approved call). Whatever
 * goes wrong here, the answer so far stands: its calls ran, and must not look as if they had not.
 */
export async function answerWithElicitation(
  ctx: ServiceContext,
  caller: Caller,
  tool: MetaTool,
  args: Record<string, unknown>,
  body: unknown,
  extra: Extra,
  progress: RequestProgress | undefined,
): Promise<unknown> {
  let answer = body;
  // A call routed to a remote source (`<source>:…`) names the source's integration: not ours to connect.
  const remote = typeof args.name === 'string' && args.name.includes(':');
  const missing = remote ? [] : integrationsToConnect(tool.name, answer);
  // This call cannot wait for the human (the user's waiting calls are all taken) and nothing in it
  // ran: MCP's URLElicitationRequiredError (-32042) hands the client the links; it calls again after.
  if (missing.length && nothingRan(tool.name, answer) && elicitingSlotsFull(ctx.config, caller)) {
    const links = await connectLinks(ctx, caller, missing).catch(() => []);
    if (links.length) throw new UrlElicitationRequiredError(links, 'Connect first: open the links, then send this call again.');
  }
  try {
    const connected = missing.length ? await connectByElicitation(ctx, caller, missing, extra, progress) : [];
    if (connected.length) answer = await runAgain(ctx, caller, tool, args, answer, connected);
    if (hasPendingApproval(ctx, tool.name, answer)) {
      const flatNames = ((args.executions as { tool?: string }[] | undefined) ?? []).map((e) => String(e.tool ?? ''));
      answer = await approveByElicitation(ctx, caller, tool.name, answer, extra, progress, flatNames);
    }
  } catch (err) {
    ctx.logger.warn({ tool: tool.name, err: (err as Error).message }, 'URL elicitation failed; the answer so far stands');
  }
  return answer;
}

/**
 * The call once more after `connected` were connected: only the entries that were not connected to
 * one of them (the others ran), under a request id of its own when the call had one (the first id
 * answers its recorded outcomes).
 */
export async function runAgain(
  ctx: ServiceContext,
  caller: Caller,
  tool: MetaTool,
  args: Record<string, unknown>,
  first: unknown,
  connected: readonly string[],
): Promise<unknown> {
  const again = (more: Record<string, unknown>) =>
    runMetaTool(tool, ctx, caller, {
      ...args,
      ...more,
      ...(typeof args.requestId === 'string' && { requestId: afterConnectRequestId(args.requestId) }),
    });
  if (tool.name !== 'execute_tools') return again({});
  const results = [...((first as { results: unknown[] }).results ?? [])];
  const executions = args.executions as unknown[];
  const redo = results.flatMap((r, i) =>
    integrationsToConnect('execute_tools', { results: [r] }).some((n) => connected.includes(n)) ? [i] : [],
  );
  const rerun = (await again({ executions: redo.map((i) => executions[i]) })) as { results: unknown[] };
  redo.forEach((i, k) => {
    results[i] = rerun.results[k];
  });
  return { ...(first as object), results };
}

/**
 * The request id of the run after connecting: derived from the caller's (so resending it collects
 * that run instead of starting another; request ids are per caller, like every one).
 */
const afterConnectRequestId = (requestId: string) => `after-connect:${createHash('sha256').update(requestId).digest('base64url')}`;
