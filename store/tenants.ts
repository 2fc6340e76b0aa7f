import type { TenantSettings } from '../core/policy.js';
import { newId } from './ids.js';
import type { Queryable } from './queryable.js';

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
