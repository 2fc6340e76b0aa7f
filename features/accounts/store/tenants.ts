import type { TenantSettings } from '../../../core/policy.js';
import { inTransaction, lockKey, type Queryable } from '../../../platform/database/queryable.js';
import { newId } from '../../../platform/database/random-ids.js';

export interface Tenant {
  id: string;
  name: string;
  settings: TenantSettings;
}

const fromRow = (r: { id: string; name: string; settings: TenantSettings }): Tenant => ({
  id: r.id,
  name: r.name,
  settings: r.settings ?? {},
});

export async function createTenant(db: Queryable, input: { name: string; id?: string; settings?: TenantSettings }): Promise<Tenant> {
  const { rows } = await db.query('INSERT INTO tenants (id, name, settings) VALUES ($1, $2, $3) RETURNING id, name, settings', [
    input.id ?? newId('tenant'),
    input.name,
    input.settings ?? {},
  ]);
  return fromRow(rows[0]);
}

export async function getTenant(db: Queryable, id: string): Promise<Tenant | undefined> {
  const { rows } = await db.query('SELECT id, name, settings FROM tenants WHERE id = $1', [id]);
  return rows[0] ? fromRow(rows[0]) : undefined;
}

export async function listTenants(db: Queryable): Promise<Tenant[]> {
  const { rows } = await db.query('SELECT id, name, settings FROM tenants ORDER BY created_at');
  return rows.map(fromRow);
}

export async function updateTenantSettings(db: Queryable, id: string, settings: TenantSettings): Promise<Tenant | undefined> {
  const { rows } = await db.query('UPDATE tenants SET settings = $2 WHERE id = $1 RETURNING id, name, settings', [id, settings]);
  return rows[0] ? fromRow(rows[0]) : undefined;
}

/**
 * Reads a tenant's settings, changes them with `change` and stores the result, under the tenant's
 * settings lock: two administrators changing different settings at once never undo each other.
 * Undefined for an unknown tenant (nothing is stored). `change` may throw to store nothing.
 */
export function changeTenantSettings(
  db: Queryable,
  tenantId: string,
  change: (current: TenantSettings) => TenantSettings,
): Promise<Tenant | undefined> {
  return inTransaction(db, async (tx) => {
    await lockKey(tx, `tenant-settings:${tenantId}`);
    const tenant = await getTenant(tx, tenantId);
    return tenant && updateTenantSettings(tx, tenantId, change(tenant.settings));
  });
}
