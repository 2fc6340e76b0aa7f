import { newId } from './ids.js';
import type { Queryable } from './queryable.js';

export interface User {
  id: string;
  tenantId: string;
  email: string;
  roles: string[];
}

const COLUMNS = 'id, tenant_id AS "tenantId", email, roles';

export async function createUser(db: Queryable, input: { tenantId: string; email: string; roles?: string[] }): Promise<User> {
  const { rows } = await db.query(`INSERT INTO users (id, tenant_id, email, roles) VALUES ($1, $2, $3, $4) RETURNING ${COLUMNS}`, [
    newId('user'),
    input.tenantId,
    input.email,
    input.roles ?? ['member'],
  ]);
  return rows[0];
}

export async function getUser(db: Queryable, id: string): Promise<User | undefined> {
  const { rows } = await db.query(`SELECT ${COLUMNS} FROM users WHERE id = $1`, [id]);
  return rows[0];
}

export async function findUserByEmail(db: Queryable, email: string): Promise<User | undefined> {
  const { rows } = await db.query(`SELECT ${COLUMNS} FROM users WHERE lower(email) = lower($1)`, [email]);
  return rows[0];
}

export async function listUsers(db: Queryable, tenantId: string): Promise<User[]> {
  const { rows } = await db.query(`SELECT ${COLUMNS} FROM users WHERE tenant_id = $1 ORDER BY created_at`, [tenantId]);
  return rows;
}

export async function setUserRoles(db: Queryable, id: string, roles: string[]): Promise<User | undefined> {
  const { rows } = await db.query(`UPDATE users SET roles = $2 WHERE id = $1 RETURNING ${COLUMNS}`, [id, roles]);
  return rows[0];
}
