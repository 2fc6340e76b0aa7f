import { randomUUID } from 'node:crypto';
import type { Caller } from '../../core/caller.js';
import type { Config } from '../../core/config.js';
import { MetaToolError } from '../../core/errors.js';
import { TOOL_ERROR_CODES } from '../../core/execution.js';
import { policyAdmits, policyRefusal, type TenantSettings } from '../../core/policy.js';
import { policyRefusalAnswer } from '../../core/policy-refusal-text.js';
import { ResponseTooLarge } from '../../providers/sdk/http.js';
import { capResponse } from '../../providers/sdk/response-cap.js';
import { mayHaveReachedService } from '../../providers/sdk/transport-loss.js';
import { tenantSettings } from '../catalog/caller-tenant.js';
import type { ServiceContext } from '../context.js';
import { recordToolCall } from '../execution/store/audit.js';
import { ASSERTION_HEADER, signAssertion } from './assertion.js';
import { forwardedRequestId } from './request-id.js';

/**
 * Remote and composite sources: other Switchboard instances listed in SWITCHBOARD_SOURCES
 * answer connections_search and connections_execute beside this one. Then every tool name and
 * account id carries a `<source>:` prefix, a search merges all sources (naming the ones that
 * failed or timed out in `unavailable`), and an execution is routed by its prefix.
 *
 * A source serves only the local tenants its entry names. The local tenant's policy applies to a
 * remote tool exactly as to a local one, before anything is sent. Each request carries a signed
 * assertion naming the local tenant and user, so the remote acts as a user of its own for each
 * local user (features/sources/delegation.ts), and a requestId is forwarded only as a MAC.
 */

type Source = Config['SWITCHBOARD_SOURCES'][number];

interface SearchAnswer {
  ok: boolean;
  results?: { name: string; accounts?: { id: string }[] }[];
  /** Integrations (here) or sources (from a remote source) that could not be searched. */
  unavailable?: string[];
}

type ExecuteArgs = { name: string; arguments: Record<string, unknown>; account?: string; requestId?: string };

export const hasRemoteSources = (config: Config) => config.SWITCHBOARD_SOURCES.length > 0;

/** The remote sources this caller's tenant may use. */
const sourcesFor = (config: Config, caller: Caller) => config.SWITCHBOARD_SOURCES.filter((s) => s.tenants.includes(caller.tenantId));

const prefixed = (source: string, value: string) => `${source}:${value}`;

/** `eu:github__list_repos` → { source: 'eu', rest: 'github__list_repos' } when `eu` is this instance or one of `sources`. */
function splitSource(config: Config, sources: readonly Source[], value: string): { source: string; rest: string } | undefined {
  const at = value.indexOf(':');
  if (at <= 0) return undefined;
  const source = value.slice(0, at);
  const known = source === config.SOURCE_NAME || sources.some((s) => s.name === source);
  return known ? { source, rest: value.slice(at + 1) } : undefined;
}

/** `github__list_repos` → provider and unqualified tool, the two names the tenant policy speaks of. */
function qualifiedParts(name: string): { provider: string; tool: string } | undefined {
  const at = name.indexOf('__');
  return at > 0 && at + 2 < name.length ? { provider: name.slice(0, at), tool: name.slice(at + 2) } : undefined;
}

/** The agent surface answers its own failures as bodies ({ok: false, …}); anything else is the source failing. */
const agentSurfaceAnswer = (_status: number, body: unknown): boolean => typeof (body as { ok?: unknown } | undefined)?.ok === 'boolean';

async function callSource(
  source: Source,
  caller: Caller,
  tool: string,
  args: unknown,
  limits: { timeoutMs: number; maxBytes: number },
  answered: (status: number, body: unknown) => boolean = agentSurfaceAnswer,
): Promise<unknown> {
  const assertion = await signAssertion(source.assertionKey, { tenant: caller.tenantId, user: caller.userId });
  const res = await fetch(`${source.url.replace(/\/$/, '')}/v1/tools/${tool}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${source.apiKey}`, [ASSERTION_HEADER]: assertion, 'content-type': 'application/json' },
    body: JSON.stringify(args),
    signal: AbortSignal.timeout(limits.timeoutMs),
  });
  // A remote is another service answering us: its answer is read only up to the provider-response cap (finding 16).
  const body = (await capResponse(res, limits.maxBytes)
    .json()
    .catch((err: unknown) => {
      if (err instanceof ResponseTooLarge) throw err;
      return undefined;
    })) as unknown;
  if (body !== undefined && answered(res.status, body)) return body;
  throw new Error(`source ${source.name} answered HTTP ${res.status}`);
}

/** A remote's results with prefixes, keeping only tools the local tenant's policy admits. */
function prefixSearch(source: string, answer: SearchAnswer, admits: (name: string) => boolean) {
  return (answer.results ?? [])
    .filter((r) => typeof r.name === 'string' && admits(r.name))
    .map((r) => ({
      ...r,
      name: prefixed(source, r.name),
      ...(r.accounts && { accounts: r.accounts.map((a) => ({ ...a, id: prefixed(source, a.id) })) }),
    }));
}

function admitsRemoteTool(settings: TenantSettings, caller: Caller) {
  return (name: string) => {
    const parts = qualifiedParts(name);
    return parts !== undefined && policyAdmits(settings, caller.roles, parts.provider, parts.tool);
  };
}

/** Merges this instance's ranked results with each source's, taking each source's best in turn. */
export async function compositeSearch(
  ctx: ServiceContext,
  caller: Caller,
  args: { query: string; provider?: string; limit: number },
  searchHere: () => Promise<SearchAnswer>,
) {
  const { config } = ctx;
  const unavailable: string[] = [];
  const admits = admitsRemoteTool(await tenantSettings(ctx, caller), caller);
  const lists = await Promise.all([
    searchHere().then((answer) => {
      // This instance's own upstreams that are down, named as a source's tools are: `<source>:<integration>`.
      for (const name of answer.unavailable ?? []) unavailable.push(prefixed(config.SOURCE_NAME, name));
      return prefixSearch(config.SOURCE_NAME, answer, () => true);
    }),
    ...sourcesFor(config, caller).map((source) =>
      callSource(source, caller, 'connections_search', args, {
        timeoutMs: config.SOURCE_TIMEOUT_MS,
        maxBytes: config.CONNECTIONS_PROVIDER_RESPONSE_MAX_BYTES,
      }).then(
        (answer) => prefixSearch(source.name, answer as SearchAnswer, admits),
        () => {
          unavailable.push(source.name);
          return [];
        },
      ),
    ),
  ]);
  const merged: unknown[] = [];
  for (let rank = 0; merged.length < args.limit && lists.some((l) => rank < l.length); rank++) {
    for (const list of lists) if (rank < list.length && merged.length < args.limit) merged.push(list[rank]);
  }
  return { ok: true, results: merged, ...(unavailable.length ? { unavailable } : {}) };
}

/**
 * connections_execute with sources: routed by routeExecute. A call run here writes its own audit
 * row (the tool activity); one answered at a source, or refused before routing, gets its row here
 * too, so every call a local user makes is in this instance's audit log (the source keeps its own).
 */
export async function compositeExecute(
  ctx: ServiceContext,
  caller: Caller,
  args: ExecuteArgs,
  executeHere: (args: ExecuteArgs) => Promise<unknown>,
  options: { joinOnly?: boolean } = {},
) {
  let ranHere = false;
  const started = performance.now();
  const answer = await routeExecute(
    ctx,
    caller,
    args,
    (routed) => {
      ranHere = true;
      return executeHere(routed);
    },
    options,
  );
  if (!ranHere) await auditRoutedCall(ctx, caller, args, answer, performance.now() - started);
  return answer;
}

/** The tool_call row of a call answered without running here: its outcome and code as answered, argument names only. */
async function auditRoutedCall(ctx: ServiceContext, caller: Caller, args: ExecuteArgs, answer: unknown, durationMs: number) {
  const a = answer as { ok?: unknown; error?: { code?: unknown } } | undefined;
  const ok = a?.ok === true;
  // A source's code is its text: only the codes this instance knows are recorded as such.
  const code = (TOOL_ERROR_CODES as readonly unknown[]).includes(a?.error?.code) ? (a?.error?.code as string) : 'tool_failed';
  await recordToolCall(ctx.pool, {
    callKey: `source-call-${randomUUID()}`,
    tenantId: caller.tenantId,
    actorUserId: caller.userId,
    ownerUserId: null,
    accountId: null,
    tool: args.name,
    outcome: ok ? 'ok' : 'error',
    errorCode: ok ? null : code,
    durationMs,
    argNames: Object.keys(args.arguments ?? {}),
  });
}

/**
 * Routes a call by its `<source>:` prefix: here, or — once the local policy admits it — to the
 * source that owns the tool. `joinOnly` (an MCP task reading a call whose answer it did not record):
 * a call here only reads its batch; a call to a source is not sent again, as nothing at the source
 * can be asked only to read (past its retention the same requestId would run the call anew).
 */
async function routeExecute(
  ctx: ServiceContext,
  caller: Caller,
  args: ExecuteArgs,
  executeHere: (args: ExecuteArgs) => Promise<unknown>,
  options: { joinOnly?: boolean },
) {
  const { config } = ctx;
  const sources = sourcesFor(config, caller);
  const target = splitSource(config, sources, args.name);
  if (!target) {
    return {
      ok: false,
      error: {
        code: 'not_found',
        message: `No tool is named ${args.name}; names here carry a source prefix, <source>:<provider>__<tool>.`,
      },
    };
  }
  // An account id carries its source's prefix; a label (and a connection id) does not, and goes to the tool's source as it is.
  const account = args.account ? splitSource(config, sources, args.account) : undefined;
  if (account && account.source !== target.source) {
    return { ok: false, error: { code: 'not_connected', message: `No account "${args.account}" of source ${target.source} is yours.` } };
  }
  const routed = { ...args, name: target.rest, account: account ? account.rest : args.account };
  if (target.source === config.SOURCE_NAME) return executeHere(routed);

  const parts = qualifiedParts(target.rest);
  if (!parts)
    return { ok: false, error: { code: 'not_found', message: `No tool is named ${args.name}; expected <source>:<provider>__<tool>.` } };
  const refusal = policyRefusal(await tenantSettings(ctx, caller), caller.roles, parts.provider, parts.tool);
  if (refusal) {
    return { ok: false, error: policyRefusalAnswer(refusal, parts.provider, args.name) };
  }

  const source = sources.find((s) => s.name === target.source)!;
  if (options.joinOnly) {
    throw new MetaToolError(
      {
        error:
          `This call was sent to source ${source.name} and its answer was not recorded here, so its outcome is unknown: ` +
          'check before running it again.',
      },
      410,
    );
  }
  const forwarded = { ...routed, requestId: args.requestId && forwardedRequestId(source.assertionKey, caller, args.requestId) };
  try {
    // A tool call may run up to its deadline at the source.
    const answer = await callSource(source, caller, 'connections_execute', forwarded, {
      timeoutMs: config.CONNECTIONS_TOOL_TIMEOUT_MS + 30_000,
      maxBytes: config.CONNECTIONS_PROVIDER_RESPONSE_MAX_BYTES,
    });
    return withSourceApprovalId(source.name, withSourceResultRef(source.name, answer));
  } catch (err) {
    // Sent, then no answer in time or the connection broke: the source may have run the call.
    if ((err as Error).name === 'TimeoutError' || mayHaveReachedService(err)) {
      const message = `This call was sent to source ${source.name} and its answer was lost (${(err as Error).message}); its outcome is unknown, so check before retrying.`;
      return { ok: false, error: { code: 'outcome_unknown', message } };
    }
    return { ok: false, error: { code: 'tool_failed', message: `Source ${source.name} is unavailable: ${(err as Error).message}` } };
  }
}

/**
 * A result the source cut names a reference held there: prefixed with the source, so read_result
 * here knows where to read on (remoteReadResult).
 */
function withSourceResultRef(source: string, answer: unknown): unknown {
  const ref = (answer as { resultRef?: unknown } | undefined)?.resultRef;
  return typeof ref === 'string' ? { ...(answer as object), resultRef: prefixed(source, ref) } : answer;
}

/**
 * A call the source gated for approval names an approval held there: prefixed with the source, so
 * wait_for_approval here knows where to wait (remoteWaitForApproval). Its page is the source's.
 */
function withSourceApprovalId(source: string, answer: unknown): unknown {
  const a = answer as { ok?: unknown; error?: { code?: unknown; approvalId?: unknown } } | undefined;
  if (a?.ok !== false || a.error?.code !== 'approval_required' || typeof a.error.approvalId !== 'string') return answer;
  return { ...a, error: { ...a.error, approvalId: prefixed(source, a.error.approvalId) } };
}

/**
 * A meta-tool call about something a remote source holds (its id carries the source's prefix):
 * made at that source as this caller's delegate there (so the source answers only the user it
 * belongs to), or undefined when the id names no remote source of this caller's tenant. The
 * source's 404 and 400 refusals pass on as they are (`unknown` is its "not found" text); any other
 * answer than one `isAnswer` accepts is the source being unavailable (503).
 */
async function atSourceOf(
  ctx: ServiceContext,
  caller: Caller,
  prefixedId: string,
  call: { tool: string; args: (rest: string) => Record<string, unknown>; timeoutMs: number; unknown: string },
  isAnswer: (body: unknown) => boolean,
): Promise<{ status: number; body: Record<string, unknown> } | undefined> {
  const { config } = ctx;
  const sources = sourcesFor(config, caller);
  const target = splitSource(config, sources, prefixedId);
  if (!target || target.source === config.SOURCE_NAME) return undefined;
  const source = sources.find((s) => s.name === target.source)!;
  const isRefusal = (body: unknown) => typeof (body as { error?: unknown }).error === 'string';
  try {
    const body = (await callSource(
      source,
      caller,
      call.tool,
      call.args(target.rest),
      { timeoutMs: call.timeoutMs, maxBytes: config.CONNECTIONS_PROVIDER_RESPONSE_MAX_BYTES },
      (status, answer) => (status === 200 && isAnswer(answer)) || ((status === 400 || status === 404) && isRefusal(answer)),
    )) as Record<string, unknown>;
    if (!isAnswer(body)) return { status: body.error === call.unknown ? 404 : 400, body: { error: String(body.error).slice(0, 500) } };
    return { status: 200, body };
  } catch (err) {
    return { status: 503, body: { error: `Source ${source.name} is unavailable: ${(err as Error).message}` } };
  }
}

/**
 * wait_for_approval of a `<source>:`-prefixed approval: waits at the source. It answers the
 * execute_tools shape (`{status, result?: {result} | {error}}`).
 */
export function remoteWaitForApproval(ctx: ServiceContext, caller: Caller, args: { approvalId: string; timeoutSec: number }) {
  return atSourceOf(
    ctx,
    caller,
    args.approvalId,
    {
      tool: 'wait_for_approval',
      args: (approvalId) => ({ approvalId, timeoutSec: args.timeoutSec }),
      timeoutMs: (args.timeoutSec + 30) * 1000,
      unknown: 'Unknown approvalId',
    },
    (body) => typeof (body as { status?: unknown }).status === 'string',
  );
}

/** read_result of a `<source>:`-prefixed reference: read on at the source that cut the result. */
export async function remoteReadResult(ctx: ServiceContext, caller: Caller, args: { resultRef: string } & Record<string, unknown>) {
  const answer = await atSourceOf(
    ctx,
    caller,
    args.resultRef,
    {
      tool: 'read_result',
      args: (resultRef) => ({ ...args, resultRef }),
      timeoutMs: ctx.config.SOURCE_TIMEOUT_MS,
      unknown: 'Unknown resultRef',
    },
    (body) => typeof (body as { totalBytes?: unknown }).totalBytes === 'number',
  );
  // The slice names the reference as this caller knows it, prefix included.
  return answer?.status === 200 ? { ...answer, body: { ...answer.body, resultRef: args.resultRef } } : answer;
}
