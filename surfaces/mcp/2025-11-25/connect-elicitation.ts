import { setTimeout as sleep } from 'node:timers/promises';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { ElicitResultSchema, type ServerNotification, type ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Caller } from '../../../core/caller.js';
import { MetaToolError } from '../../../core/errors.js';
import { listUsableAccounts } from '../../../features/accounts/store/accounts.js';
import { getAttemptForCaller } from '../../../features/connections/store/connection-attempts.js';
import { startConnection } from '../../../features/connections/tools/connect.js';
import type { ServiceContext } from '../../../features/context.js';
import { fullBound, inSlot, type WaitLimits } from '../../../features/wait-slots.js';

/**
 * URL elicitation for connect (MCP 2025-11-25, "URL mode"): a tool call that finds the caller not
 * connected, from a client that declared `elicitation.url`, sends that client the same portal link
 * `connect` answers — bound to the caller, so only they can finish it — as `elicitation/create`
 * with `mode: "url"`, watches the attempt until it connects, says
 * `notifications/elicitation/complete`, and lets the call run again. All on the call's own response
 * stream: the client's answer to the request is not needed (the consent happens in the browser).
 */

/** How long a call waits for the human without progress reports (a client's default request timeout is 60 s). */
export const ELICITATION_WAIT_SEC = 45;
/** …and with them (a client that resets its timeout on progress waits this long at most). */
export const ELICITATION_WAIT_WITH_PROGRESS_SEC = 600;
/** Calls of one user waiting on a human at once, per process; more answer as they would have (NOT_CONNECTED). */
export const MAX_ELICITING_CALLS_PER_USER = 5;
const HEARTBEAT_MS = 10_000;
const POLL_MS = 1_000;

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** What sends a request's notifications: the v1 SDK's handler `extra`, or an adapter over the v2 SDK's `ctx.mcpReq.notify`. */
interface NotificationSender {
  sendNotification(notification: Extract<ServerNotification, { method: 'notifications/progress' }>): Promise<void>;
}

/** Progress notifications of one request, whatever sends them: each value above the last (the spec's rule). */
export class RequestProgress {
  private last = 0;
  constructor(
    private readonly extra: NotificationSender,
    private readonly token: string | number,
  ) {}

  report(progress: number, total?: number, message?: string): void {
    if (progress <= this.last) return;
    this.last = progress;
    void this.extra
      .sendNotification({ method: 'notifications/progress', params: { progressToken: this.token, progress, total, message } })
      .catch(() => {});
  }

  /** One more step, for waits that have no count of their own. */
  beat(message: string): void {
    this.report(this.last + 1, undefined, message);
  }
}

/** The bounds of calls waiting on a human: the user's here, the tenant's shared with every waiting request (features/wait-slots.ts). */
const elicitingBounds = (limits: WaitLimits) => ({ perUser: MAX_ELICITING_CALLS_PER_USER, perTenant: limits.WAITS_MAX_PER_TENANT });

/**
 * Runs `fn` in one of the user's MAX_ELICITING_CALLS_PER_USER slots of this process (a call that
 * waits on a human: connect or approval), or answers `busy` at once when all are taken (the
 * user's, or the tenant's for every kind of waiting request).
 */
export function inElicitingSlot<T>(limits: WaitLimits, caller: Caller, busy: T, fn: () => Promise<T>): Promise<T> {
  return inSlot('eliciting', caller, elicitingBounds(limits), () => busy, fn);
}

/** Whether all of the user's waiting slots in this process are taken (a call now cannot wait for a human). */
export const elicitingSlotsFull = (limits: WaitLimits, caller: Caller): boolean =>
  fullBound('eliciting', caller, elicitingBounds(limits)) !== undefined;

/**
 * Whether nothing in a meta-tool's answer ran: every entry waits for a connection. Only then may the
 * answer be replaced by an error (URLElicitationRequiredError) without hiding a call that ran.
 */
export function nothingRan(tool: string, body: unknown): boolean {
  if (tool === 'connections_execute') return integrationsToConnect(tool, body).length > 0;
  const results = (body as { results?: unknown[] })?.results ?? [];
  return results.length > 0 && results.every((r) => integrationsToConnect(tool, { results: [r] }).length > 0);
}

/** The links for URLElicitationRequiredError: one new attempt per integration the caller can connect by link. */
export async function connectLinks(ctx: ServiceContext, caller: Caller, integrations: readonly string[]) {
  const links: { mode: 'url'; elicitationId: string; url: string; message: string }[] = [];
  for (const integration of integrations) {
    if (!ctx.registry.get(integration)) continue;
    const started = await startConnection(ctx, caller, integration).catch((err) => {
      if (err instanceof MetaToolError) return undefined;
      throw err;
    });
    if (!started) continue;
    const displayName = displayNameOf(ctx, integration);
    links.push({ mode: 'url', elicitationId: started.connectionId, url: started.url, message: connectMessage(displayName) });
  }
  return links;
}

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
 * Connects each integration through the client's browser, one after the other; answers those the
 * caller can use now. An integration the caller already has an active account for (a resent
 * request, another tab) is not asked again; one that cannot be connected by link (API keys,
 * built-ins, not configured, another source's) is skipped: the call's answer already says what to
 * do. Stops when the client goes away (its request aborted): nothing runs for a caller who left.
 */
export async function connectByElicitation(
  ctx: ServiceContext,
  caller: Caller,
  integrations: readonly string[],
  extra: Extra,
  progress: RequestProgress | undefined,
): Promise<string[]> {
  return inElicitingSlot(ctx.config, caller, [] as string[], async () => {
    const usable: string[] = [];
    for (const integration of integrations) {
      if (extra.signal.aborted) break;
      if (await hasActiveAccount(ctx, caller, integration)) {
        usable.push(integration);
        continue;
      }
      if (!ctx.registry.get(integration)) continue;
      let started: Awaited<ReturnType<typeof startConnection>>;
      try {
        started = await startConnection(ctx, caller, integration);
      } catch (err) {
        if (err instanceof MetaToolError) continue;
        throw err;
      }
      const displayName = displayNameOf(ctx, integration);
      const elicitationId = started.connectionId;
      const waitSec = progress ? ELICITATION_WAIT_WITH_PROGRESS_SEC : ELICITATION_WAIT_SEC;
      // The client's answer (accept/decline) would arrive on another request; the attempt is what counts.
      void extra
        .sendRequest(
          {
            method: 'elicitation/create',
            params: {
              mode: 'url',
              elicitationId,
              url: started.url,
              message: connectMessage(displayName),
            },
          },
          ElicitResultSchema,
          { timeout: (waitSec + 30) * 1000, signal: extra.signal },
        )
        .catch(() => {});
      if (!(await connectedWithin(ctx, caller, started.connectionId, waitSec, extra.signal, progress, displayName))) break;
      await extra.sendNotification({ method: 'notifications/elicitation/complete', params: { elicitationId } }).catch(() => {});
      usable.push(integration);
    }
    return extra.signal.aborted ? [] : usable;
  });
}

export const displayNameOf = (ctx: ServiceContext, integration: string) =>
  ctx.registry.get(integration)?.manifest.displayName ?? integration;

/** What the client shows beside a connect link (both protocol eras). */
export const connectMessage = (displayName: string) =>
  `Connect your ${displayName} account to continue: open the link, sign in to Switchboard and approve access.`;

export async function hasActiveAccount(ctx: ServiceContext, caller: Caller, integration: string): Promise<boolean> {
  const accounts = await listUsableAccounts(ctx.pool, caller, integration);
  return accounts.some((a) => a.status === 'active' && a.hasCredential);
}

/**
 * Watches the attempt (one indexed read a second) without ending it: a human who finishes after
 * this call gave up still connects, for the attempt's own lifetime (CONNECTION_TTL_SEC).
 */
export async function connectedWithin(
  ctx: ServiceContext,
  caller: Caller,
  attemptId: string,
  waitSec: number,
  signal: AbortSignal,
  progress: RequestProgress | undefined,
  displayName: string,
): Promise<boolean> {
  const until = Date.now() + waitSec * 1000;
  let nextBeat = Date.now() + HEARTBEAT_MS;
  while (Date.now() < until && !signal.aborted) {
    const attempt = await getAttemptForCaller(ctx.pool, caller, attemptId);
    if (attempt?.status === 'CONNECTED') return true;
    if (attempt?.status !== 'PENDING') return false;
    if (progress && Date.now() >= nextBeat) {
      progress.beat(`waiting for ${displayName} to be connected`);
      nextBeat += HEARTBEAT_MS;
    }
    await sleep(POLL_MS, undefined, { signal }).catch(() => {});
  }
  return false;
}
