import { failure, type ToolOutcome } from '../../../core/execution.js';
import { providerErrorText } from '../../../core/result-limits.js';
import { ProviderHttpError } from '../../../providers/sdk/http.js';
import { mayHaveReachedService } from '../../../providers/sdk/transport-loss.js';
import { UnsafePathArgument } from '../../../providers/sdk/url-path.js';
import type { Account } from '../../accounts/store/accounts.js';
import { CredentialError } from '../../connections/credentials.js';
import type { ExecuteDeps } from './call.js';
import { DeadlineExceeded } from './deadline.js';
import { stepUp } from './reauth.js';
import { credentialFailure } from './resolve-credential.js';

/** What the tool call had when it failed: its name, its account, and the secrets its error text is redacted with. */
interface FailedCall {
  tool: string;
  timeoutMs: number;
  integration: string;
  account?: Account;
  /** The call ran with an OAuth token (a 403 may be a step-up challenge). */
  oauth: boolean;
  signal: AbortSignal;
  secrets: readonly string[];
}

/**
 * An error the tool call threw, as its answer: timeout, needs_reauth (a credential refused, or a
 * step-up), invalid_arguments (an unsafe path argument: nothing was sent), rate_limited,
 * tool_failed, or outcome_unknown when the service may have run the call.
 */
export async function callFailure(deps: Pick<ExecuteDeps, 'pool'>, err: unknown, call: FailedCall): Promise<ToolOutcome> {
  const { tool, integration, account, secrets } = call;
  if (err instanceof DeadlineExceeded || call.signal.aborted) {
    return failure('timeout', `${tool} did not finish within ${call.timeoutMs} ms.`);
  }
  if (err instanceof CredentialError) return credentialFailure(err, integration, account, secrets);
  if (err instanceof ProviderHttpError && account && call.oauth) {
    const stepped = await stepUp(deps, err, integration, account, secrets);
    if (stepped) return stepped;
  }
  if (err instanceof UnsafePathArgument) {
    // An argument that would have moved the request off its endpoint (`..`, an encoded slash): nothing was sent.
    return failure('invalid_arguments', `Arguments of ${tool} are not accepted: ${err.message}.`, {
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
      `${tool} may have reached ${integration}, but its answer was lost (${why}); its outcome is unknown, so check before retrying.`,
    );
  }
  return failure('tool_failed', `${tool} failed: ${why}`);
}

/** An error's message with its cause's (fetch's "fetch failed" says nothing without it). */
function errorText(err: unknown): string {
  const message = (err as Error)?.message ?? String(err);
  const cause = (err as { cause?: { code?: unknown; message?: unknown } })?.cause;
  const detail = typeof cause?.code === 'string' ? cause.code : typeof cause?.message === 'string' ? cause.message : undefined;
  return detail && !message.includes(detail) ? `${message}: ${detail}` : message;
}
