import { chooseAccount } from '../../../core/account-choice.js';
import { failure, type ToolOutcome } from '../../../core/execution.js';
import { type Account, listUsableAccountsWithSealedCredentials, type SealedCredentialRow } from '../../accounts/store/accounts.js';
import { getAttemptForCaller } from '../../connections/store/connection-attempts.js';
import type { ExecuteDeps } from './call.js';

/** The account a call runs on, with its sealed credential (opened only if the call gets that far). */
interface CallAccount {
  account: Account;
  sealed: SealedCredentialRow | undefined;
}

/**
 * The account the caller named (an id, a label, or the connection id `connect` gave) or their
 * default among the accounts they may use, with its sealed credential; not_connected when none fits.
 */
export async function chooseCallAccount(
  deps: ExecuteDeps,
  caller: { tenantId: string; userId: string; roles: readonly string[] },
  integration: string,
  named: string | undefined,
): Promise<CallAccount | ToolOutcome> {
  // The accounts with their sealed credentials in one round trip; only the chosen one is opened.
  const { accounts, sealed } = await listUsableAccountsWithSealedCredentials(deps.pool, caller, integration);
  let selector = named;
  if (selector && !accounts.some((a) => a.id === selector || a.label === selector)) {
    // A connection id from `connect` names the account it produced.
    selector = (await getAttemptForCaller(deps.pool, caller, selector).catch(() => undefined))?.accountId ?? selector;
  }
  const account = chooseAccount(accounts, selector);
  if (!account) {
    return named
      ? failure('not_connected', `No ${integration} account of yours matches "${named}".`, { integration })
      : failure('not_connected', `You are not connected to ${integration}.`, { integration });
  }
  return { account, sealed: sealed.get(account.id) };
}
