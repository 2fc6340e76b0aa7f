import type { CallerOwner } from '../../core/caller.js';
import { MetaToolError } from '../../core/errors.js';
import { connectRefusal } from '../../core/policy.js';
import type { Pool } from '../../platform/database/database.js';
import { getTenant } from '../accounts/store/tenants.js';
import { getUser } from '../accounts/store/users.js';

/**
 * Refuses (403) a user who may not connect `integration` now — for the organisation when
 * `accountScope` is `tenant` — by the tenant's one connect rule (core/policy.ts `connectRefusal`).
 * The user's roles and the tenant's settings are read fresh from the store, never from a session
 * or a link made earlier: every step of a connection calls this, so a role taken away between
 * `connect` and the consent page stops the connection.
 */
export async function assertMayConnect(
  pool: Pool,
  who: CallerOwner,
  integration: string,
  accountScope: 'user' | 'tenant' = 'user',
): Promise<void> {
  const refusal = await whyMayNotConnect(pool, who, integration, accountScope);
  if (refusal) throw new MetaToolError({ error: refusal }, 403);
}

/** The same rule as `assertMayConnect`, answered as the reason (for a page), or undefined when allowed. */
export async function whyMayNotConnect(
  pool: Pool,
  who: CallerOwner,
  integration: string,
  accountScope: 'user' | 'tenant' = 'user',
): Promise<string | undefined> {
  const [user, tenant] = await Promise.all([getUser(pool, who.userId), getTenant(pool, who.tenantId)]);
  if (!user || user.tenantId !== who.tenantId) return 'This user no longer exists.';
  return connectRefusal(tenant?.settings ?? {}, user.roles, integration, accountScope === 'tenant');
}
