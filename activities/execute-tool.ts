import { Context } from '@temporalio/activity';
import { approvalOfRerun, requestApproval } from '../approvals/prepare.js';
import { chooseAccount } from '../core/account-choice.js';
import { needsApproval } from '../core/approval-policy.js';
import { secretArgumentTexts } from '../core/approval-summary.js';
import { reportedIssues } from '../core/errors.js';
import { failure, type LostCallCode, outcomeUnknown, type ToolCallRequest, type ToolOutcome } from '../core/execution.js';
import { MAX_ARGUMENT_NESTING, nestsDeeperThan } from '../core/json-depth.js';
import { cachedInputJsonSchema, inputJsonSchema } from '../core/json-schema.js';
import { policyRefusal } from '../core/policy.js';
import { policyRefusalAnswer } from '../core/policy-refusal-text.js';
import { providerErrorText, redact } from '../core/result-limits.js';
import { type CallOutcome, workflowResultLimit } from '../core/stored-results.js';
import { ProviderHttpError } from '../providers/http.js';
import { stepUpScopes } from '../providers/mcp-auth/index.js';
import type { ProviderRegistry, ToolEntry } from '../providers/registry.js';
import type { Credential, Provider } from '../providers/sdk.js';
import { createToolContext } from '../providers/tool-context.js';
import { mayHaveReachedService } from '../providers/transport-loss.js';
import { UnsafePathArgument } from '../providers/url-path.js';
import { type Account, listUsableAccountsWithSealedCredentials, markNeedsReauth, markStepUp, setAccountStatus } from '../store/accounts.js';
import { claimToolCallReadingCaller, recordToolCall, type ToolCallClaim } from '../store/audit.js';
import { getAttemptForCaller } from '../store/connection-attempts.js';
import type { LoadedCredential } from '../store/credential-seal.js';
import type { Keyring } from '../store/keyring.js';
import { hasSealedArguments, openSealedArguments, SealedArgumentError } from '../store/sealed-arguments.js';
import { getUserAndTenant, type UserAndTenant } from '../store/user-and-tenant.js';
import { tokenRefreshes, toolCallDuration, toolCalls } from '../telemetry/metrics.js';
import { AccountSlots, type SlotRelease, SlotWaitAborted } from './account-slots.js';
import { CredentialError, CredentialStore, secretsOf, toToolCredential } from './credentials.js';
import { deliverResult } from './deliver-result.js';
import type { ActivityDeps } from './deps.js';

export interface ExecuteToolInput {
  /** Unique per call (workflow id + index): the audit row is written once under it. */
  callKey: string;
  tenantId: string;
  userId: string;
  call: ToolCallRequest;
  /** Default CONNECTIONS_TOOL_TIMEOUT_MS (agent workflows leave it to the deployment). */
  timeoutMs?: number;
  /** Default CONNECTIONS_TOOL_RESULT_MAX_BYTES. */
  maxResultBytes?: number;
  /**
   * Results (JSON bytes) above this are stored sealed and answered as a reference (a tool batch
   * sets it; see core/stored-results.ts). Unset: every result is answered inline, cut at
   * maxResultBytes — a cut one with its `resultRef`.
   */
  inlineResultMaxBytes?: number;
  /**
   * Claim the call key (the audit row, no outcome yet) before anything reaches the service, and
   * answer "outcome unknown" if it was claimed before. For a local activity, which Temporal runs
   * again when the workflow task that ran it is lost; a normal activity with one attempt needs none.
   */
  claimFirst?: boolean;
  /**
   * An agent's workflow asks: when the call needs approval, the approval workflow signals this
   * workflow once it is settled (switchboard/workflow waits on that signal).
   */
  notifyApproval?: boolean;
}

/** How a call runs: `approved` when an approval workflow runs a call a person approved (no second gate). */
interface RunOptions {
  approved?: boolean;
}

interface CallAudit {
  account?: Account;
  /** The account slot the call holds: given back with the call's audit row (executeToolCall). */
  slot?: SlotRelease;
  /** The caller's user and tenant, when the claim's statement read them (claimToolCallReadingCaller). */
  caller?: UserAndTenant;
}

class DeadlineExceeded extends Error {}

/**
 * Distinct secret argument values (secretArgumentTexts) one call may carry. Every result and error
 * text is scanned once per secret to redact it, on the worker's event loop: a megabyte of short
 * strings under a key named `token` would be 90,000 scans of a result of up to 10 MB. No real tool
 * takes more than a few secrets.
 */
export const MAX_SECRET_ARGUMENT_VALUES = 8;

/** listedTool's answer to a 401 on an OAuth token it may refresh. */
const REFRESH_AND_RETRY = Symbol('refresh-and-retry');

/** The metric label of every tenant's own upstream servers (metricProvider). */
const TENANT_UPSTREAM = 'tenant-upstream';

/**
 * One tool call: policy → argument parse → credential (refreshed when near expiry) → provider
 * call under the deadline → on a 401, one refresh and one retry → redaction → truncation →
 * audit row. Failures are returned as outcomes, never thrown.
 */
type ExecuteDeps = Pick<ActivityDeps, 'pool' | 'keyring' | 'registry' | 'logger' | 'config' | 'toolServices' | 'temporal'>;

/**
 * The execute activity and the approval workflow's run of an approved call share one runner, so
 * an approved call goes through the same policy, claim, deadline and audit as any other.
 */
export function createToolCallRunner(deps: ExecuteDeps) {
  const slots = new AccountSlots(deps.pool, deps.config.CONNECTIONS_ACCOUNT_MAX_CONCURRENCY, (err) =>
    deps.logger.warn({ err: err.message }, 'could not renew account slots'),
  );
  const credentials = new CredentialStore(deps.pool, deps.keyring, deps.registry, (provider, outcome) =>
    tokenRefreshes.inc({ provider, outcome }),
  );

  async function run(input: Required<ExecuteToolInput>, audit: CallAudit, options: RunOptions): Promise<CallOutcome> {
    const { call } = input;
    // The caller's tenant's view: its own upstream servers, never another tenant's.
    const registry = await deps.registry.forTenant(input.tenantId);
    const listed = registry.dynamicProviderOf(call.tool);
    let entry = listed ? undefined : registry.toolByQualifiedName(call.tool);
    const provider = listed ?? entry?.provider;
    if (!provider) return failure('not_found', `No tool is named ${call.tool}.`);
    const integration = provider.manifest.name;
    const toolName = entry?.tool.name ?? call.tool.slice(integration.length + 2);

    const { user, tenant } = audit.caller ?? (await getUserAndTenant(deps.pool, input.userId, input.tenantId));
    const settings = tenant?.settings ?? {};
    // A user of another tenant (or none) has no role here at all; otherwise the one tenant policy decides.
    const refusal = !user || user.tenantId !== input.tenantId ? 'role' : policyRefusal(settings, user.roles, integration, toolName);
    if (!user || refusal) {
      const { code, message } = policyRefusalAnswer(refusal ?? 'role', integration, call.tool);
      return failure(code, message);
    }

    // An upstream tool's arguments are checked in a worker thread (schema-checker.ts): asynchronously.
    const parse = async (found: ToolEntry) => {
      const args = call.args ?? {};
      const parsed = found.tool.asyncInput ? await found.tool.input.safeParseAsync(args) : found.tool.input.safeParse(args);
      if (parsed.success) {
        // Each secret argument is one more scan of the result and of any error text (redaction).
        const secretValues = new Set(secretArgumentTexts(call.args ?? {}, cachedInputJsonSchema(found.tool))).size;
        if (secretValues > MAX_SECRET_ARGUMENT_VALUES) {
          return failure(
            'invalid_arguments',
            `Arguments of ${call.tool} hold ${secretValues} secret values; at most ${MAX_SECRET_ARGUMENT_VALUES} are accepted in one call.`,
          );
        }
        return { valid: true as const, data: parsed.data };
      }
      return failure('invalid_arguments', `Arguments do not fit the schema of ${call.tool}.`, {
        issues: reportedIssues(parsed.error.issues),
      });
    };

    /**
     * A call that needs a person's approval stops here, before it reaches the service: it is
     * recorded and its approval workflow started (approvals/prepare.ts); the answer is approval_required.
     */
    const gate = (found: ToolEntry, account?: Account): Promise<ToolOutcome> | undefined => {
      if (options.approved || !needsApproval(settings, found)) return undefined;
      return requestApproval(deps, {
        callKey: input.callKey,
        tenantId: input.tenantId,
        userId: input.userId,
        call: input.call,
        settings,
        schema: inputJsonSchema(found.tool),
        account: account && { id: account.id, label: account.label, scope: account.scope },
        timeoutMs: input.timeoutMs,
        notifyWorkflowId: notifyWorkflowId(input),
      });
    };

    if (provider.manifest.auth === 'none') {
      if (listed) {
        const found = await listedTool(registry, listed, input, { type: 'none' });
        if (found === REFRESH_AND_RETRY || !('tool' in found)) return found as ToolOutcome;
        entry = found;
      }
      const parsed = await parse(entry!);
      if (!('valid' in parsed)) return parsed;
      return (await gate(entry!)) ?? invoke(registry, entry!, input, parsed.data, audit);
    }
    const caller = { tenantId: input.tenantId, userId: input.userId, roles: user.roles };
    // The accounts with their sealed credentials in one round trip; only the chosen one is opened.
    const { accounts, sealed } = await listUsableAccountsWithSealedCredentials(deps.pool, caller, integration);
    let selector = call.account;
    if (selector && !accounts.some((a) => a.id === selector || a.label === selector)) {
      // A connection id from `connect` names the account it produced.
      selector = (await getAttemptForCaller(deps.pool, caller, selector).catch(() => undefined))?.accountId ?? selector;
    }
    const account = chooseAccount(accounts, selector);
    if (!account) {
      return call.account
        ? failure('not_connected', `No ${integration} account of yours matches "${call.account}".`, { integration })
        : failure('not_connected', `You are not connected to ${integration}.`, { integration });
    }
    audit.account = account;
    // The spec's order: policy (the account the caller may use, its scopes), then the arguments, then the credential.
    const missing = (entry?.tool.scopes ?? []).filter((s) => !account.grantedScopes.includes(s));
    if (missing.length) return failure('forbidden', `Your ${integration} connection lacks the scope ${missing.join(', ')}.`);
    let args: unknown;
    if (entry) {
      const parsed = await parse(entry);
      if (!('valid' in parsed)) return parsed;
      args = parsed.data;
    }
    if (account.status === 'needs_reauth' || !account.hasCredential) return needsReauth(integration, account);
    // A declared tool is gated before its credential is even loaded; a listed one once it is known.
    const gated = entry && (await gate(entry, account));
    if (gated) return gated;

    // The account's secrets, once known: a failed refresh's text (the token endpoint's words) is redacted with them.
    let secrets: string[] = [];
    try {
      let loaded = await credentials.load(account, sealed.get(account.id));
      if (!loaded) return needsReauth(integration, account);
      secrets = secretsOf(loaded.credential);
      if (provider.credentialBinding && loaded.credential.boundTo !== provider.credentialBinding) {
        // Stored for another server that had this name: never sent to this one (nor refreshed for it).
        await markNeedsReauth(deps.pool, { ...account, credentialVersion: loaded.version });
        return needsReauth(integration, account);
      }
      if (credentials.needsRefresh(loaded)) loaded = await credentials.refresh(account);
      if (listed) {
        // An upstream server's tools as this account sees them (listed with its credential when stale).
        let found = await listedTool(registry, listed, input, toToolCredential(loaded.credential), account);
        if (found === REFRESH_AND_RETRY) {
          // A 401 on an OAuth token: one refresh, one more listing (the tool call gets the same one on its own 401).
          loaded = await credentials.refresh(account, loaded.version);
          found = await listedTool(registry, listed, input, toToolCredential(loaded.credential), account, false);
        }
        if (found === REFRESH_AND_RETRY || !('tool' in found)) return found as ToolOutcome;
        entry = found;
        const parsed = await parse(entry);
        if (!('valid' in parsed)) return parsed;
        args = parsed.data;
        const gatedListed = await gate(entry, account);
        if (gatedListed) return gatedListed;
      }
      return await invoke(registry, entry!, input, args, audit, { loaded, account });
    } catch (err) {
      if (err instanceof CredentialError) {
        return err.code === 'needs_reauth'
          ? needsReauth(integration, account)
          : failure('tool_failed', `${integration}: ${providerErrorText(err.message, secrets)}`);
      }
      throw err;
    }
  }

  /**
   * The entry of an upstream MCP server's tool for this credential, or the failure to answer: the
   * server does not offer it (not_found), refused the credential (needs_reauth), or could not list;
   * REFRESH_AND_RETRY when an OAuth token was refused (401) and `mayRefresh`.
   */
  async function listedTool(
    registry: ProviderRegistry,
    provider: Provider,
    input: Required<ExecuteToolInput>,
    credential: Credential,
    account?: Account,
    mayRefresh = true,
  ): Promise<ToolEntry | ToolOutcome | typeof REFRESH_AND_RETRY> {
    const integration = provider.manifest.name;
    const signal = AbortSignal.timeout(input.timeoutMs);
    try {
      const found = await registry.dynamicTool(provider, input.call.tool, credential, signal);
      return found ?? failure('not_found', `No tool is named ${input.call.tool}.`);
    } catch (err) {
      if (mayRefresh && err instanceof ProviderHttpError && err.status === 401 && account && credential.type === 'oauth2') {
        return REFRESH_AND_RETRY;
      }
      if (err instanceof ProviderHttpError && (err.status === 401 || err.status === 403) && account) {
        const stepped = await stepUp(err, integration, account, toolSecrets(credential));
        if (stepped) return stepped;
        await setAccountStatus(deps.pool, account.tenantId, account.id, 'needs_reauth');
        return needsReauth(integration, account);
      }
      if (signal.aborted) return failure('timeout', `${integration} did not list its tools within ${input.timeoutMs} ms.`);
      const why = err instanceof ProviderHttpError ? `answered HTTP ${err.status}` : (err as Error).message;
      return failure('tool_failed', `${integration} could not list its tools: ${providerErrorText(why, toolSecrets(credential))}`);
    }
  }

  function needsReauth(integration: string, account: Account): ToolOutcome {
    const who = account.scope === 'tenant' ? 'an administrator' : 'the user';
    return failure('needs_reauth', `The ${integration} connection "${account.label}" stopped working; ask ${who} to reconnect it.`, {
      integration,
    });
  }

  /**
   * A 403 whose `WWW-Authenticate` says `insufficient_scope` and names scopes the token lacks
   * (RFC 6750; the MCP authorization spec's step-up): the account needs a new consent with those
   * scopes, which the next connect asks for. Undefined for any other 403 (a plain refusal is tool_failed).
   */
  async function stepUp(
    err: ProviderHttpError,
    integration: string,
    account: Account,
    secrets: readonly string[],
  ): Promise<ToolOutcome | undefined> {
    const wanted = err.status === 403 ? stepUpScopes(err.challenge, account.grantedScopes) : undefined;
    if (!wanted) return undefined;
    // The account stays usable for what it already may do (an organisation account is shared: one
    // member's call must not take it from everyone); the next connect asks for the wider scopes.
    await markStepUp(deps.pool, account, wanted.scopes);
    const who = account.scope === 'tenant' ? 'an administrator' : 'the user';
    const reason = providerErrorText(wanted.reason, [...secrets]);
    return failure(
      'needs_reauth',
      `The ${integration} connection "${account.label}" needs more access for this call: ${reason}. Ask ${who} to connect ${integration} again to grant it.`,
      { integration, reason },
    );
  }

  /**
   * Calls the provider (with `auth`, or none for built-ins), with one refresh-and-retry on a 401
   * for OAuth credentials.
   */
  async function invoke(
    registry: ProviderRegistry,
    entry: ToolEntry,
    input: Required<ExecuteToolInput>,
    args: unknown,
    audit: CallAudit,
    auth?: { loaded: LoadedCredential; account: Account },
  ): Promise<CallOutcome> {
    const account = auth?.account;
    const integration = entry.provider.manifest.name;
    const deadline = AbortSignal.timeout(input.timeoutMs);
    const signal = activitySignal() ? AbortSignal.any([deadline, activitySignal()!]) : deadline;
    // The credential's secrets, and the arguments the tool's schema marks secret (a service may echo one back).
    let secrets = [
      ...(auth ? secretsOf(auth.loaded.credential) : []),
      ...secretArgumentTexts(input.call.args ?? {}, cachedInputJsonSchema(entry.tool)),
    ];
    const attempt = (current?: LoadedCredential) =>
      entry.tool.run(
        args,
        createToolContext({
          provider: entry.provider,
          credential: current ? toToolCredential(current.credential) : { type: 'none' },
          apiBaseUrl: registry.apiBaseUrl(integration),
          signal,
          logger: deps.logger.child({ tool: input.call.tool }),
          caller: { tenantId: input.tenantId, userId: input.userId },
          services: deps.toolServices,
          maxResponseBytes: deps.config.CONNECTIONS_PROVIDER_RESPONSE_MAX_BYTES,
        }),
      );
    const withDeadline = <T>(p: Promise<T>) =>
      new Promise<T>((resolve, reject) => {
        if (signal.aborted) return reject(new DeadlineExceeded());
        signal.addEventListener('abort', () => reject(new DeadlineExceeded()), { once: true });
        p.then(resolve, reject);
      });

    // At most CONNECTIONS_ACCOUNT_MAX_CONCURRENCY calls in flight per account; a queued call keeps its deadline.
    // The slot is given back with the call's audit row (executeToolCall), in the same statement.
    if (account) {
      try {
        audit.slot = await slots.acquire(account, signal);
      } catch (err) {
        if (!(err instanceof SlotWaitAborted)) throw err;
        return failure(
          'timeout',
          `${input.call.tool} did not get a turn on the ${integration} account "${account.label}" within ${input.timeoutMs} ms: ` +
            `at most ${deps.config.CONNECTIONS_ACCOUNT_MAX_CONCURRENCY} calls run at once per account.`,
        );
      }
    }
    try {
      let result: unknown;
      try {
        result = await withDeadline(attempt(auth?.loaded));
      } catch (err) {
        if (!(err instanceof ProviderHttpError && err.status === 401) || !auth || !account) throw err;
        const { loaded } = auth;
        if (loaded.credential.type !== 'oauth2' || !loaded.credential.refreshToken) {
          // A 401 with no way to refresh: the stored API key, cookies or token no longer work.
          await setAccountStatus(deps.pool, account.tenantId, account.id, 'needs_reauth');
          return needsReauth(integration, account);
        }
        const refreshed = await withDeadline(credentials.refresh(account, loaded.version));
        secrets = [...secrets, ...secretsOf(refreshed.credential)];
        result = await withDeadline(attempt(refreshed));
      }
      const clean = redactResult(result, secrets);
      return await deliverResult(deps, { tenantId: input.tenantId, userId: input.userId, tool: input.call.tool }, clean, input);
    } catch (err) {
      if (err instanceof DeadlineExceeded || signal.aborted) {
        return failure('timeout', `${input.call.tool} did not finish within ${input.timeoutMs} ms.`);
      }
      if (err instanceof CredentialError) {
        return err.code === 'needs_reauth' && account
          ? needsReauth(integration, account)
          : failure('tool_failed', `${integration}: ${providerErrorText(err.message, secrets)}`);
      }
      if (err instanceof ProviderHttpError && account && auth?.loaded.credential.type === 'oauth2') {
        const stepped = await stepUp(err, integration, account, secrets);
        if (stepped) return stepped;
      }
      if (err instanceof UnsafePathArgument) {
        // An argument that would have moved the request off its endpoint (`..`, an encoded slash): nothing was sent.
        return failure('invalid_arguments', `Arguments of ${input.call.tool} are not accepted: ${err.message}.`, {
          issues: [{ path: [err.argument], message: err.reason }],
        });
      }
      if (err instanceof ProviderHttpError && err.retryAfterSec !== undefined) {
        // Not tool_failed: the service refused for now, and says when it takes calls again.
        return failure(
          'rate_limited',
          `${integration} is limiting calls (HTTP ${err.status}); try again in ${err.retryAfterSec} s: ${providerErrorText(err.body, secrets)}`,
          { status: err.status, integration, retryAfterSec: err.retryAfterSec },
        );
      }
      if (err instanceof ProviderHttpError) {
        return failure('tool_failed', `${integration} answered HTTP ${err.status}: ${providerErrorText(err.body, secrets)}`, {
          status: err.status,
        });
      }
      const why = providerErrorText(errorText(err), secrets);
      if (mayHaveReachedService(err)) {
        // Not tool_failed, which an agent retries: the service may have run the call.
        return failure(
          'outcome_unknown',
          `${input.call.tool} may have reached ${integration}, but its answer was lost (${why}); its outcome is unknown, so check before retrying.`,
        );
      }
      return failure('tool_failed', `${input.call.tool} failed: ${why}`);
    }
  }

  /**
   * The metric label of a call's provider. Tenants' own servers share one label: their names and
   * tools are chosen by each tenant, and metric labels must stay few.
   */
  async function metricProvider(input: ExecuteToolInput): Promise<string> {
    const known = deps.registry.toolByQualifiedName(input.call.tool);
    if (known) return known.provider.manifest.name;
    const view = await deps.registry.forTenant(input.tenantId).catch(() => deps.registry);
    return view !== deps.registry && view.toolByQualifiedName(input.call.tool) ? TENANT_UPSTREAM : 'unknown';
  }

  return {
    async executeToolCall(sealed: ExecuteToolInput, options: RunOptions = {}): Promise<CallOutcome> {
      const { request, refusal } = withOpenedArguments(deps.keyring, sealed);
      const inline = (bytes: number) => (request.inlineResultMaxBytes === undefined ? workflowResultLimit(bytes) : bytes);
      const input = {
        claimFirst: false,
        notifyApproval: false,
        ...request,
        timeoutMs: request.timeoutMs ?? deps.config.CONNECTIONS_TOOL_TIMEOUT_MS,
        // Every result inline (an agent's workflow) is cut within what a workflow can carry.
        maxResultBytes: inline(request.maxResultBytes ?? deps.config.CONNECTIONS_TOOL_RESULT_MAX_BYTES),
        inlineResultMaxBytes: request.inlineResultMaxBytes ?? Number.POSITIVE_INFINITY,
      };
      const started = performance.now();
      const audit: CallAudit = {};
      let outcome: CallOutcome;
      // Heartbeats tell Temporal this worker is alive, so a crash is noticed within seconds.
      const heartbeat = activityContext()?.info.isLocal === false && setInterval(() => activityContext()?.heartbeat(), 1000);
      try {
        // The claim's statement also reads the caller's user and tenant (one round trip for both).
        let claimed = true;
        if (input.claimFirst) {
          const { claimed: first, ...caller } = await claimToolCallReadingCaller(deps.pool, auditIdentity(input));
          claimed = first;
          audit.caller = caller;
        }
        // A re-run of a call whose first run asked for approval answers that approval again: nothing ran.
        const rerun =
          !claimed &&
          (await approvalOfRerun(deps, input.callKey, { timeoutMs: input.timeoutMs, notifyWorkflowId: notifyWorkflowId(input) }));
        outcome = claimed ? (refusal ?? (await run(input, audit, options))) : rerun || outcomeUnknown(input.call.tool);
      } catch (err) {
        deps.logger.error({ tool: input.call.tool, err: (err as Error).message }, 'tool call failed inside Switchboard');
        outcome = failure('tool_failed', `${input.call.tool} failed inside Switchboard; the server logged the details.`);
      } finally {
        if (heartbeat) clearInterval(heartbeat);
      }
      const durationMs = performance.now() - started;
      const { slot } = audit;
      try {
        await recordToolCall(
          deps.pool,
          {
            ...auditIdentity(input),
            ownerUserId: audit.account?.scope === 'user' ? (audit.account.ownerUserId ?? null) : null,
            accountId: audit.account?.id ?? null,
            outcome: outcome.ok ? 'ok' : 'error',
            errorCode: outcome.ok ? null : outcome.error.code,
            durationMs,
          },
          slot?.ticket,
        );
      } catch (err) {
        await slot?.().catch((releaseErr: Error) =>
          deps.logger.warn({ err: releaseErr.message }, 'could not give an account slot back; it lapses with its lease'),
        );
        throw err;
      }
      slot?.releasedElsewhere();
      const label = outcome.ok ? 'ok' : outcome.error.code;
      const provider = await metricProvider(input);
      toolCalls.inc({
        provider,
        tool: provider === 'unknown' || provider === TENANT_UPSTREAM ? provider : input.call.tool,
        outcome: label,
      });
      toolCallDuration.observe({ provider, outcome: label }, durationMs / 1000);
      deps.logger.info({ tool: input.call.tool, outcome: label, durationMs: Math.round(durationMs) }, 'tool call');
      return outcome;
    },

    /** The audit row of a call whose activity never reported (worker lost, deadline passed). */
    async recordLostToolCall(sealed: ExecuteToolInput & { errorCode: LostCallCode }): Promise<void> {
      const { request } = withOpenedArguments(deps.keyring, sealed);
      await recordToolCall(deps.pool, {
        ...auditIdentity(request),
        ownerUserId: null,
        accountId: null,
        outcome: 'error',
        errorCode: sealed.errorCode,
        durationMs: 0,
      });
    },
  };
}

/**
 * The call with its sealed arguments opened (a tool batch's input seals secret ones:
 * server/execution/seal-arguments.ts), or, when one does not open, the call as it came and the
 * invalid_arguments answer: nothing runs.
 */
function withOpenedArguments<T extends ExecuteToolInput>(keyring: Keyring, input: T): { request: T; refusal?: ToolOutcome } {
  // An agent's workflow passes its arguments straight here (the meta-tools refuse deeper ones at the
  // front): walked recursively below, so refused by name rather than overflowing the stack.
  if (nestsDeeperThan(input.call.args, MAX_ARGUMENT_NESTING)) {
    return {
      request: input,
      refusal: failure('invalid_arguments', `Arguments of ${input.call.tool} are nested more than ${MAX_ARGUMENT_NESTING} levels deep.`),
    };
  }
  if (!hasSealedArguments(input.call.args)) return { request: input };
  try {
    const owner = { tenantId: input.tenantId, userId: input.userId, tool: input.call.tool };
    return { request: { ...input, call: { ...input.call, args: openSealedArguments(keyring, owner, input.call.args) } } };
  } catch (err) {
    if (!(err instanceof SealedArgumentError)) throw err;
    return { request: input, refusal: failure('invalid_arguments', `Arguments of ${input.call.tool} are not accepted: ${err.message}.`) };
  }
}

/** Who called which tool with which argument names: the part of the audit row known before the call. */
const auditIdentity = (input: ExecuteToolInput): ToolCallClaim => ({
  callKey: input.callKey,
  tenantId: input.tenantId,
  actorUserId: input.userId,
  tool: input.call.tool,
  argNames: Object.keys(input.call.args ?? {}),
});

/** An error's message with its cause's (fetch's "fetch failed" says nothing without it). */
function errorText(err: unknown): string {
  const message = (err as Error)?.message ?? String(err);
  const cause = (err as { cause?: { code?: unknown; message?: unknown } })?.cause;
  const detail = typeof cause?.code === 'string' ? cause.code : typeof cause?.message === 'string' ? cause.message : undefined;
  return detail && !message.includes(detail) ? `${message}: ${detail}` : message;
}

/** The secret strings of a tool credential, for redaction. */
const toolSecrets = (credential: Credential): string[] =>
  credential.type === 'apikey' ? Object.values(credential.fields) : credential.type === 'oauth2' ? [credential.accessToken] : [];

/** The agent workflow a gated call's approval signals once settled (switchboard/workflow asks for it). */
const notifyWorkflowId = (input: Required<ExecuteToolInput>): string | undefined =>
  input.notifyApproval ? activityContext()?.info.workflowExecution?.workflowId : undefined;

/** The activity's context, or undefined when the function runs outside an activity (tests, tools). */
function activityContext(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined;
  }
}

const activitySignal = (): AbortSignal | undefined => activityContext()?.cancellationSignal;

/** Replaces the caller's secrets anywhere in a result (a service may echo a token back). */
function redactResult(result: unknown, secrets: string[]): unknown {
  if (!secrets.length || result === undefined) return result;
  const json = JSON.stringify(result);
  if (json === undefined || !secrets.some((s) => s.length >= 6 && json.includes(s))) return result;
  return JSON.parse(
    redact(
      json,
      secrets.map((s) => JSON.stringify(s).slice(1, -1)),
    ),
  );
}

export type ToolCallRunner = ReturnType<typeof createToolCallRunner>;

/** The execute activities as Temporal registers them (a workflow's call can never claim to be approved). */
export function createExecuteActivities(deps: ExecuteDeps, runner: ToolCallRunner = createToolCallRunner(deps)) {
  return {
    executeToolCall: (request: ExecuteToolInput): Promise<CallOutcome> => runner.executeToolCall(request),
    recordLostToolCall: runner.recordLostToolCall,
  };
}

export type ExecuteActivities = ReturnType<typeof createExecuteActivities>;
