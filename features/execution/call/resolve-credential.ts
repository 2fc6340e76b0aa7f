import { failure, type ToolOutcome } from '../../../core/execution.js';
import { providerErrorText } from '../../../core/result-limits.js';
import type { CallOutcome } from '../../../core/stored-results.js';
import { type Account, markNeedsReauth } from '../../accounts/store/accounts.js';
import { CredentialError, secretsOf } from '../../connections/credentials.js';
import type { Runner, ToolCall } from './call.js';
import { needsReauth } from './reauth.js';

/**
 * Step 3, the credential: the account's, opened from the row listed with it, refreshed first when
 * it is near expiry, into `call.loaded`. Nothing to do for a provider without auth.
 */
export async function resolveCredential({ deps, credentials }: Runner, call: ToolCall): Promise<ToolOutcome | undefined> {
  const { account, integration } = call;
  if (!account) return undefined;
  const loaded = await credentials.load(account, call.sealed);
  if (!loaded) return needsReauth(integration, account);
  call.secrets = secretsOf(loaded.credential);
  if (call.provider.credentialBinding && loaded.credential.boundTo !== call.provider.credentialBinding) {
    // Stored for another server that had this name: never sent to this one (nor refreshed for it).
    await markNeedsReauth(deps.pool, { ...account, credentialVersion: loaded.version });
    return needsReauth(integration, account);
  }
  call.loaded = credentials.needsRefresh(loaded) ? await credentials.refresh(account) : loaded;
  return undefined;
}

/** A credential that could not be loaded or refreshed, as the call's answer: needs_reauth, or tool_failed with the reason redacted. */
export function credentialFailure(
  err: CredentialError,
  integration: string,
  account: Account | undefined,
  secrets: readonly string[],
): ToolOutcome {
  return err.code === 'needs_reauth' && account
    ? needsReauth(integration, account)
    : failure('tool_failed', `${integration}: ${providerErrorText(err.message, secrets)}`);
}

/** Runs the steps that use the account's credential, answering a CredentialError they throw. */
export async function answeringCredentialErrors(call: ToolCall, steps: () => Promise<CallOutcome>): Promise<CallOutcome> {
  try {
    return await steps();
  } catch (err) {
    if (!(err instanceof CredentialError) || !call.account) throw err;
    return credentialFailure(err, call.integration, call.account, call.secrets);
  }
}
