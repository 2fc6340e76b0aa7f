import { createHash } from 'node:crypto';
import type { Queryable } from '../../../platform/database/queryable.js';
import { newSecret } from '../../../platform/database/random-ids.js';

const hash = (token: string) => createHash('sha256').update(token).digest();

/** A one-time portal sign-in token for development (`admin login-link`). */
export async function createLoginToken(db: Queryable, userId: string, ttlSec = 900): Promise<string> {
  const token = newSecret(32);
  await db.query('INSERT INTO login_tokens (token_hash, user_id, expires_at) VALUES ($1, $2, now() + make_interval(secs => $3))', [
    hash(token),
    userId,
    ttlSec,
  ]);
  return token;
}

/** Consumes the token; answers its user only the first time and only before it expires. */
export async function consumeLoginToken(db: Queryable, token: string): Promise<{ userId: string; tenantId: string } | undefined> {
  const { rows } = await db.query(
    `UPDATE login_tokens l SET used_at = now() FROM users u
      WHERE l.token_hash = $1 AND l.used_at IS NULL AND l.expires_at > now() AND u.id = l.user_id
      RETURNING u.id AS "userId", u.tenant_id AS "tenantId"`,
    [hash(token)],
  );
  return rows[0];
}

/**
 * Whose account an unused, unexpired token signs in to, without using it: the sign-in page names
 * the account before the human confirms (a link someone else sent may open theirs).
 */
export async function peekLoginToken(db: Queryable, token: string): Promise<{ userId: string; email: string } | undefined> {
  const { rows } = await db.query(
    `SELECT u.id AS "userId", u.email FROM login_tokens l JOIN users u ON u.id = l.user_id
      WHERE l.token_hash = $1 AND l.used_at IS NULL AND l.expires_at > now()`,
    [hash(token)],
  );
  return rows[0];
}
