import { createHash } from 'node:crypto';
import type { Pool } from '../../../platform/database/database.js';
import { lockKey, type Queryable, transaction } from '../../../platform/database/queryable.js';
import { newId } from '../../../platform/database/random-ids.js';
import { createApiKey } from '../../accounts/store/api-keys.js';
import { setUserRoles } from '../../accounts/store/users.js';

/**
 * Source keys and their delegates (migration 1700000000013): how another Switchboard instance acts
 * here for each of its users, each as a user of its own in the key's tenant.
 */

interface SourceKey {
  apiKeyId: string;
  tenantId: string;
  /** The key's own user: the delegates' tenant and first roles. */
  templateUserId: string;
  source: string;
  publicKey: string;
}

/** Creates the API key (shown once) and marks it as a source key for the other instance's public key. */
export async function createSourceKey(
  pool: Pool,
  input: { tenantId: string; templateUserId: string; source: string; publicKey: string },
): Promise<{ id: string; key: string }> {
  return transaction(pool, async (client) => {
    const created = await createApiKey(client, {
      tenantId: input.tenantId,
      userId: input.templateUserId,
      label: `source ${input.source}`,
    });
    await client.query('INSERT INTO source_keys (api_key_id, tenant_id, source, public_key) VALUES ($1, $2, $3, $4)', [
      created.id,
      input.tenantId,
      input.source,
      input.publicKey,
    ]);
    return created;
  });
}

export async function findSourceKey(db: Queryable, apiKeyId: string): Promise<SourceKey | undefined> {
  const { rows } = await db.query(
    `SELECT s.api_key_id AS "apiKeyId", s.tenant_id AS "tenantId", k.user_id AS "templateUserId", s.source, s.public_key AS "publicKey"
       FROM source_keys s JOIN api_keys k ON k.id = s.api_key_id
      WHERE s.api_key_id = $1`,
    [apiKeyId],
  );
  return rows[0];
}

/** An address that names the delegate and can receive no mail (RFC 2606 `.invalid`). */
function delegateEmail(key: SourceKey, originTenantId: string, originUserId: string): string {
  const digest = createHash('sha256').update(`${key.tenantId}\0${key.source}\0${originTenantId}\0${originUserId}`).digest('hex');
  return `delegate-${digest.slice(0, 24)}@${key.source}.source.invalid`;
}

/**
 * The user here who acts for (source, origin tenant, origin user): found, or created on first use.
 * A delegate always holds the template user's roles as they are now, so taking a role from the
 * template (or all of them) takes it from every delegate at their next request, not only from
 * delegates created afterwards.
 */
export async function delegateUser(
  pool: Pool,
  key: SourceKey,
  origin: { tenantId: string; userId: string },
): Promise<{ userId: string; roles: string[] }> {
  const find = (db: Queryable) =>
    db
      .query(
        `SELECT u.id AS "userId", u.roles, t.roles AS "templateRoles"
           FROM source_delegates d JOIN users u ON u.id = d.user_id JOIN users t ON t.id = $5
          WHERE d.tenant_id = $1 AND d.source = $2 AND d.origin_tenant_id = $3 AND d.origin_user_id = $4`,
        [key.tenantId, key.source, origin.tenantId, origin.userId, key.templateUserId],
      )
      .then((r) => r.rows[0] as { userId: string; roles: string[]; templateRoles: string[] } | undefined);
  const found = await find(pool);
  if (found) {
    if (!sameRoles(found.roles, found.templateRoles)) await setUserRoles(pool, found.userId, found.templateRoles);
    return { userId: found.userId, roles: found.templateRoles };
  }
  return transaction(pool, async (client) => {
    await lockKey(client, JSON.stringify(['source-delegate', key.tenantId, key.source, origin.tenantId, origin.userId]));
    const raced = await find(client);
    if (raced) return { userId: raced.userId, roles: raced.roles };
    const { rows } = await client.query(
      `INSERT INTO users (id, tenant_id, email, roles)
       SELECT $1, $2, $3, roles FROM users WHERE id = $4
       RETURNING id AS "userId", roles`,
      [newId('user'), key.tenantId, delegateEmail(key, origin.tenantId, origin.userId), key.templateUserId],
    );
    await client.query(
      'INSERT INTO source_delegates (tenant_id, source, origin_tenant_id, origin_user_id, user_id) VALUES ($1, $2, $3, $4, $5)',
      [key.tenantId, key.source, origin.tenantId, origin.userId, rows[0].userId],
    );
    return rows[0];
  });
}

const sameRoles = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((role, i) => role === b[i]);
