import { type Account, deleteAccount, readCredential } from '../accounts/store/accounts.js';
import type { ConnectionServices } from './services.js';

/**
 * Disconnects an account: revokes its OAuth token at the service when the service has a
 * revocation endpoint (a failed revocation is logged, and the account is deleted anyway), then
 * deletes the account with its sealed credential. Shared by the `disconnect` meta-tool and the
 * portal; deciding who may disconnect which account is the caller's job.
 */
export async function disconnectAccount(
  ctx: Pick<ConnectionServices, 'pool' | 'keyring' | 'registry' | 'logger'>,
  account: Pick<Account, 'tenantId' | 'id' | 'integration'>,
): Promise<{ revoked: boolean; deleted: boolean }> {
  let revoked = false;
  const flow = (await ctx.registry.forTenant(account.tenantId)).oauthFlow(account.integration);
  if (flow) {
    const credential = await readCredential(ctx.pool, ctx.keyring, account.tenantId, account.id);
    const token = credential?.type === 'oauth2' ? (credential.refreshToken ?? credential.accessToken) : undefined;
    if (token) {
      revoked = await flow.revoke(token, credential?.oauth).catch((err: Error) => {
        ctx.logger.warn({ integration: account.integration, err: err.message }, 'revocation failed; deleting anyway');
        return false;
      });
    }
  }
  const deleted = await deleteAccount(ctx.pool, account.tenantId, account.id);
  return { revoked, deleted };
}
