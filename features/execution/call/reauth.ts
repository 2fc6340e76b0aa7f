import { failure, type ToolOutcome } from '../../../core/execution.js';
import { providerErrorText } from '../../../core/result-limits.js';
import { stepUpScopes } from '../../../providers/remote-mcp/oauth-client/index.js';
import type { ProviderHttpError } from '../../../providers/sdk/http.js';
import { type Account, markStepUp } from '../../accounts/store/accounts.js';
import type { ExecuteDeps, ToolCall } from './call.js';

export function needsReauth(integration: string, account: Account): ToolOutcome {
  const who = account.scope === 'tenant' ? 'an administrator' : 'the user';
  return failure('needs_reauth', `The ${integration} connection "${account.label}" stopped working; ask ${who} to reconnect it.`, {
    integration,
  });
}

/** An account already known to need a new connection (or holding no credential) stops the call before its credential is read. */
export function refuseUnusableAccount(call: ToolCall): ToolOutcome | undefined {
  const { account } = call;
  if (account && (account.status === 'needs_reauth' || !account.hasCredential)) return needsReauth(call.integration, account);
  return undefined;
}

/**
 * A 403 whose `WWW-Authenticate` says `insufficient_scope` and names scopes the token lacks
 * (RFC 6750; the MCP authorization spec's step-up): the account needs a new consent with those
 * scopes, which the next connect asks for. Undefined for any other 403 (a plain refusal is tool_failed).
 */
export async function stepUp(
  deps: Pick<ExecuteDeps, 'pool'>,
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
