import { createHash } from 'node:crypto';
import type { Caller } from '../../../core/caller.js';
import type { Queryable } from '../../../platform/database/queryable.js';
import { newId, newSecret } from '../../../platform/database/random-ids.js';

interface ApiKeyInfo {
  id: string;
  userId: string;
  label: string | null;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

const KEY_PREFIX = 'sbk_';
const hashKey = (key: string): Buffer => createHash('sha256').update(key).digest();

/** Creates a key and returns it in clear exactly once; only its hash is stored. */
export async function createApiKey(
  db: Queryable,
  input: { tenantId: string; userId: string; label?: string },
): Promise<{ id: string; key: string }> {
  const id = newId('apiKey');
  const key = `${KEY_PREFIX}${newSecret(32)}`;
  await db.query('INSERT INTO api_keys (id, tenant_id, user_id, key_hash, label) VALUES ($1, $2, $3, $4, $5)', [
    id,
    input.tenantId,
    input.userId,
    hashKey(key),
    input.label ?? null,
  ]);
  return { id, key };
}

/**
 * The caller a key stands for, or undefined. `last_used_at` is written at most once a minute per
 * key: a write on every request made concurrent requests with one key queue on its row lock.
 */
export async function authenticateApiKey(db: Queryable, key: string): Promise<Caller | undefined> {
  if (!key.startsWith(KEY_PREFIX) || key.length > 200) return undefined;
  const { rows } = await db.query(
    `WITH found AS (
       SELECT k.id, k.tenant_id, k.user_id, k.last_used_at, u.roles
         FROM api_keys k JOIN users u ON u.id = k.user_id
        WHERE k.key_hash = $1 AND k.revoked_at IS NULL
     ), touched AS (
       UPDATE api_keys SET last_used_at = now()
         FROM found
        WHERE api_keys.id = found.id AND (found.last_used_at IS NULL OR found.last_used_at < now() - interval '1 minute')
     )
     SELECT id AS "keyId", tenant_id AS "tenantId", user_id AS "userId", roles,
            EXISTS (SELECT 1 FROM source_keys s WHERE s.api_key_id = found.id) AS "sourceKey"
       FROM found`,
    [hashKey(key)],
  );
  return rows[0];
}

export async function listApiKeys(db: Queryable, tenantId: string): Promise<ApiKeyInfo[]> {
  const { rows } = await db.query(
    `SELECT id, user_id AS "userId", label, created_at AS "createdAt", last_used_at AS "lastUsedAt", revoked_at AS "revokedAt"
       FROM api_keys WHERE tenant_id = $1 ORDER BY created_at`,
    [tenantId],
  );
  return rows;
}

/** Revokes the key and ends its user's portal sessions (a leaked key may mean a taken-over account). */
export async function revokeApiKey(db: Queryable, id: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `WITH revoked AS (UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL RETURNING user_id)
     UPDATE users SET session_version = session_version + 1 FROM revoked WHERE users.id = revoked.user_id`,
    [id],
  );
  return (rowCount ?? 0) > 0;
}
