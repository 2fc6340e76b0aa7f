import type { TenantSettings } from '../../../core/policy.js';
import type { Queryable } from '../../../platform/database/queryable.js';
import type { Tenant } from './tenants.js';
import type { User } from './users.js';

/**
 * A call's user and the tenant it names, in one round trip (every tool call reads both before its
 * policy check). Each is looked up by its own id alone, exactly as getUser and getTenant do, so
 * the caller still checks that the user belongs to the tenant.
 */
export interface UserAndTenant {
  user: User | undefined;
  tenant: Tenant | undefined;
}

/** The columns getUserAndTenant selects, for a statement that reads them beside other work (`$user`, `$tenant`: its parameters). */
export const USER_AND_TENANT_SELECT = (user: string, tenant: string) =>
  `SELECT u.id AS user_id, u.tenant_id AS user_tenant_id, u.email, u.roles, t.id AS tenant_id, t.name, t.settings
     FROM (SELECT 1) one
     LEFT JOIN users u ON u.id = ${user}
     LEFT JOIN tenants t ON t.id = ${tenant}`;

export async function getUserAndTenant(db: Queryable, userId: string, tenantId: string): Promise<UserAndTenant> {
  const { rows } = await db.query(USER_AND_TENANT_SELECT('$1', '$2'), [userId, tenantId]);
  return userAndTenantOf(rows[0]);
}

/** The user and tenant of a row with USER_AND_TENANT_SELECT's columns. */
export function userAndTenantOf(row: Record<string, unknown>): UserAndTenant {
  const r = row as {
    user_id: string | null;
    user_tenant_id: string;
    email: string;
    roles: string[];
    tenant_id: string | null;
    name: string;
    settings: TenantSettings | null;
  };
  return {
    user: r.user_id === null ? undefined : { id: r.user_id, tenantId: r.user_tenant_id, email: r.email, roles: r.roles },
    tenant: r.tenant_id === null ? undefined : { id: r.tenant_id, name: r.name, settings: r.settings ?? {} },
  };
}
