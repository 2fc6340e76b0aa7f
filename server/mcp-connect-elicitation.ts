import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { ElicitResultSchema, type ServerNotification, type ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Caller } from '../core/caller.js';
import { MetaToolError } from '../core/errors.js';
import type { ServiceContext } from './context.js';
import { startConnection } from './meta/connect.js';

/**
 * URL elicitation for connect (MCP 2025-11-25, "URL mode"): a tool call that finds the caller not
 * connected, from a client that declared `elicitation.url`, sends that client the same portal link
 * `connect` answers — bound to the caller, so only they can finish it — as `elicitation/create`
 * with `mode: "url"`, waits for the connection workflow, says `notifications/elicitation/complete`,
 * and lets the call run again. All on the call's own response stream: the client's answer to the
 * request is not needed (the consent happens in the browser), so no session state is.
 */

/** How long a call waits for the human without progress reports (a client's default request timeout is 60 s). */
export const ELICITATION_WAIT_SEC = 45;
/** …and with them (a client that resets its timeout on progress waits this long at most). */
export const ELICITATION_WAIT_WITH_PROGRESS_SEC = 600;
const HEARTBEAT_MS = 10_000;

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** The integrations a meta-tool's answer says the caller must connect (execute_tools and connections_execute bodies). */
export function integrationsToConnect(tool: string, body: unknown): string[] {
  const found = new Set<string>();
  const consider = (entry: unknown) => {
    const e = entry as { error?: unknown; integration?: unknown; ok?: unknown } | undefined;
    if (e?.error === 'NOT_CONNECTED' && typeof e.integration === 'string') found.add(e.integration);
    const agentError = (e?.ok === false ? e.error : undefined) as { code?: string; integration?: string } | undefined;
    if ((agentError?.code === 'not_connected' || agentError?.code === 'needs_reauth') && agentError.integration) {
      found.add(agentError.integration);
    }
  };
  if (tool === 'execute_tools') for (const r of (body as { results?: unknown[] })?.results ?? []) consider(r);
  if (tool === 'connections_execute') consider(body);
  return [...found];
}

/**
 * Connects each integration through the client's browser, one after the other; answers those
 * that connected in time. An integration that cannot be connected by link (API keys, built-ins,
 * not configured) is skipped: the call's answer already says what to do.
 */
export async function connectByElicitation(
  ctx: ServiceContext,
  caller: Caller,
  integrations: readonly string[],
  extra: Extra,
  progressToken: string | number | undefined,
): Promise<string[]> {
  const connected: string[] = [];
  for (const integration of integrations) {
    let started: Awaited<ReturnType<typeof startConnection>>;
    try {
      started = await startConnection(ctx, caller, integration);
    } catch (err) {
      if (err instanceof MetaToolError) continue;
      throw err;
    }
    const displayName = ctx.registry.get(integration)?.manifest.displayName ?? integration;
    const elicitationId = started.connectionId;
    // The answer (accept/decline) would arrive on another request; the wait below is what counts.
    void extra
      .sendRequest(
        {
          method: 'elicitation/create',
          params: {
            mode: 'url',
            elicitationId,
            url: started.url,
            message: `Connect your ${displayName} account to continue: open the link, sign in to Switchboard and approve access.`,
          },
        },
        ElicitResultSchema,
      )
      .catch(() => {});
    const waitSec = progressToken === undefined ? ELICITATION_WAIT_SEC : ELICITATION_WAIT_WITH_PROGRESS_SEC;
    let beats = 0;
    const heartbeat =
      progressToken === undefined
        ? undefined
        : setInterval(() => {
            void extra
              .sendNotification({
                method: 'notifications/progress',
                params: { progressToken, progress: ++beats, message: `waiting for ${displayName} to be connected` },
              })
              .catch(() => {});
          }, HEARTBEAT_MS);
    try {
      const status = await ctx.waiter.wait(started.connectionId, waitSec);
      if (status !== 'CONNECTED') break;
    } finally {
      if (heartbeat) clearInterval(heartbeat);
    }
    await extra.sendNotification({ method: 'notifications/elicitation/complete', params: { elicitationId } }).catch(() => {});
    connected.push(integration);
  }
  return connected;
}
