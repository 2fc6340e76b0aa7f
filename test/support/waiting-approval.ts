import { createApproval } from '../../features/approvals/store/approvals.js';
import type { Stack, TestUser } from './stack.js';

/**
 * A pending approval of `user`'s, written straight to the store as a gated call would leave one
 * (a note deletion waiting 10 minutes): what tests fill a user's bounds with.
 */
export async function createWaitingApproval(stack: Stack, user: TestUser, callKey: string) {
  const { approval } = await createApproval(stack.services.pool, stack.services.keyring, {
    callKey,
    tenantId: user.user.tenantId,
    requesterUserId: user.user.id,
    call: { tool: 'jots__delete_note', args: { id: 'jot_x' } },
    accountId: null,
    accountLabel: null,
    accountScope: 'user',
    summary: { tool: 'jots__delete_note', account: null, arguments: { id: 'jot_x' } },
    shownArguments: { id: 'jot_x' },
    ttlSec: 600,
  });
  return approval;
}
