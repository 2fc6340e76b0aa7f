import type { ToolOutcome } from '../../../core/execution.js';
import { ProviderHttpError } from '../../../providers/sdk/http.js';
import { type Account, setAccountStatus } from '../../accounts/store/accounts.js';
import type { LoadedCredential } from '../../accounts/store/credential-seal.js';
import { secretsOf } from '../../connections/credentials.js';
import type { Runner } from './call.js';
import { withinDeadline } from './deadline.js';
import { needsReauth } from './reauth.js';

/**
 * Step 5: one attempt with the credential; on a provider 401 one refresh and one retry for an
 * OAuth token that can be refreshed, needs_reauth for a credential that cannot. Any other error is
 * thrown for callFailure. The refreshed token's secrets join `secrets` (a service may echo it).
 */
export async function runRefreshingOnce(
  { deps, credentials }: Runner,
  attempt: (credential?: LoadedCredential) => Promise<unknown>,
  auth: { integration: string; account?: Account; loaded?: LoadedCredential; signal: AbortSignal; secrets: string[] },
): Promise<{ result: unknown } | ToolOutcome> {
  const { account, loaded, signal } = auth;
  try {
    return { result: await attempt(loaded) };
  } catch (err) {
    if (!(err instanceof ProviderHttpError && err.status === 401) || !loaded || !account) throw err;
    if (loaded.credential.type !== 'oauth2' || !loaded.credential.refreshToken) {
      // A 401 with no way to refresh: the stored API key, cookies or token no longer work.
      await setAccountStatus(deps.pool, account.tenantId, account.id, 'needs_reauth');
      return needsReauth(auth.integration, account);
    }
    const refreshed = await withinDeadline(signal, credentials.refresh(account, loaded.version));
    auth.secrets.push(...secretsOf(refreshed.credential));
    return { result: await attempt(refreshed) };
  }
}
