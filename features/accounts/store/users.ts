import type { Queryable } from '../../../platform/database/queryable.js';
import { newId } from '../../../platform/database/random-ids.js';

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

/** Sets the roles; a change ends the user's portal sessions (they were granted under the old roles). */
export async function setUserRoles(db: Queryable, id: string, roles: string[]): Promise<User | undefined> {
  const { rows } = await db.query(
    `UPDATE users SET roles = $2, session_version = session_version + (CASE WHEN roles IS DISTINCT FROM $2::text[] THEN 1 ELSE 0 END)
      WHERE id = $1 RETURNING ${COLUMNS}`,
    [id, roles],
  );
  return rows[0];
}

/**
 * The version every portal session cookie of the user must carry. Bumping it (sign-out, a role
 * change, an API key revoked) ends all of the user's sessions at once.
 */
/** The user with their portal session version: one read serves both the session check and the page. */
export async function getSessionUser(db: Queryable, id: string): Promise<(User & { sessionVersion: number }) | undefined> {
  const { rows } = await db.query(`SELECT ${COLUMNS}, session_version AS "sessionVersion" FROM users WHERE id = $1`, [id]);
  return rows[0];
}

/** Ends every portal session of the user (their cookies carry an older version from now on). */
export async function endUserSessions(db: Queryable, id: string): Promise<void> {
  await db.query('UPDATE users SET session_version = session_version + 1 WHERE id = $1', [id]);
}

/** The user bound to this identity provider account (issuer + subject), if any. */
export async function findUserByOidcIdentity(db: Queryable, issuer: string, subject: string): Promise<User | undefined> {
  const { rows } = await db.query(`SELECT ${COLUMNS} FROM users WHERE oidc_issuer = $1 AND oidc_subject = $2`, [issuer, subject]);
  return rows[0];
}

/**
 * Binds a user who has no identity yet to the provider's issuer + subject; false when the user
 * is already bound (to another identity) or the identity already belongs to another user.
 */
export async function bindOidcIdentity(db: Queryable, id: string, issuer: string, subject: string): Promise<boolean> {
  try {
    const { rowCount } = await db.query(
      'UPDATE users SET oidc_issuer = $2, oidc_subject = $3 WHERE id = $1 AND oidc_subject IS NULL AND oidc_issuer IS NULL',
      [id, issuer, subject],
    );
    return (rowCount ?? 0) > 0;
  } catch (err) {
    if ((err as { code?: string }).code === '23505') return false;
    throw err;
  }
}

/**
 * Releases the user's sign-in identity (the next OIDC sign-in with a verified email binds again)
 * and ends their sessions; false for an unknown user.
 */
export async function unbindOidcIdentity(db: Queryable, id: string): Promise<boolean> {
  const { rowCount } = await db.query(
    'UPDATE users SET oidc_issuer = NULL, oidc_subject = NULL, session_version = session_version + 1 WHERE id = $1',
    [id],
  );
  return (rowCount ?? 0) > 0;
}
