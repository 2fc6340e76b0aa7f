import { fitAccountLabel } from '../../core/account-label.js';
import { connectionWorkflowId } from '../../core/ids.js';
import { transaction } from '../../platform/database/queryable.js';
import { type Account, type NewAccount, type StoredCredential, saveConnectedAccount } from '../accounts/store/accounts.js';
import type { ConnectionServices } from './services.js';
import { type ConnectionAttempt, finishAttempt, lockPendingAttempt } from './store/connection-attempts.js';
import { connectionResolvedSignal } from './workflow.js';

type CompletedAccount = Pick<NewAccount, 'label' | 'externalId' | 'grantedScopes' | 'accessExpiresAt'> & {
  credential: StoredCredential;
};

/**
 * Finishes a connection attempt with a credential — the end of every auth mode's flow (OAuth
 * callback, API-key form, cookie capture). Under the attempt's row lock it stores the sealed
 * credential and promotes the attempt, but only a PENDING one: an EXPIRED attempt stays EXPIRED
 * and nothing is stored (answers undefined). Then it signals the workflow with ids only; if the
 * signal is lost, the database already says CONNECTED and waiters read it there. An attempt an
 * administrator started for the organisation (`accountScope: 'tenant'`) stores an organisation
 * account, shared with nobody until the administrator chooses roles.
 */
export async function completeConnection(
  ctx: Pick<ConnectionServices, 'pool' | 'keyring' | 'temporal' | 'logger'>,
  attempt: ConnectionAttempt,
  account: CompletedAccount,
): Promise<Account | undefined> {
  const saved = await transaction(ctx.pool, async (db) => {
    if (!(await lockPendingAttempt(db, attempt.id))) return undefined;
    const stored = await saveConnectedAccount(db, ctx.keyring, {
      ...account,
      // The service's account name can be any length; a label fits the portal's rename box.
      label: fitAccountLabel(account.label),
      tenantId: attempt.tenantId,
      ownerUserId: attempt.accountScope === 'tenant' ? null : attempt.userId,
      integration: attempt.integration,
    });
    await finishAttempt(db, attempt.id, { status: 'CONNECTED', accountId: stored.id });
    return stored;
  });
  if (!saved) return undefined;
  await ctx.temporal.workflow
    .getHandle(connectionWorkflowId(attempt.id))
    .signal(connectionResolvedSignal, { status: 'CONNECTED', accountId: saved.id })
    .catch((err: Error) => ctx.logger.warn({ attemptId: attempt.id, err: err.message }, 'could not signal the connection workflow'));
  return saved;
}
