import type { Queryable } from './queryable.js';

/**
 * The account row as a token refresh sees it. Every statement here is one short query on a pooled
 * connection: nothing stays open while the token endpoint answers (finding 11).
 */
export interface RefreshRow {
  credential_sealed: string | null;
  credential_version: number;
  access_expires_at: Date | null;
  status: string;
  /** Someone holds an unexpired refresh lease. */
  leased: boolean;
}

export async function readForRefresh(db: Queryable, tenantId: string, id: string): Promise<RefreshRow | undefined> {
  const { rows } = await db.query(
    `SELECT credential_sealed, credential_version, access_expires_at, status,
            coalesce(refresh_lease_until > now(), false) AS leased
       FROM accounts WHERE tenant_id = $1 AND id = $2`,
    [tenantId, id],
  );
  return rows[0];
}

/**
 * Compare-and-set: takes the refresh lease if the credential is still at `version` and nobody
 * holds an unexpired lease. True for exactly one of any number of concurrent callers, in any
 * number of processes.
 */
export async function claimRefresh(
  db: Queryable,
  account: { tenantId: string; id: string },
  version: number,
  leaseId: string,
  leaseMs: number,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE accounts SET refresh_lease_id = $4, refresh_lease_until = now() + make_interval(secs => $5::double precision / 1000)
      WHERE tenant_id = $1 AND id = $2 AND credential_version = $3
        AND (refresh_lease_until IS NULL OR refresh_lease_until <= now())`,
    [account.tenantId, account.id, version, leaseId, leaseMs],
  );
  return rowCount === 1;
}

/**
 * Stores the refreshed credential and ends the lease, only if the lease is still ours and the
 * credential still the one refreshed (a reconnect in between wins). False when it was not stored.
 */
export async function completeRefresh(
  db: Queryable,
  account: { tenantId: string; id: string },
  update: { version: number; leaseId: string; sealed: string; keyId: string; expiresAt: Date | null },
): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE accounts SET credential_sealed = $5, credential_key_id = $6, access_expires_at = $7,
            credential_version = credential_version + 1, status = 'active', updated_at = now(),
            refresh_lease_id = NULL, refresh_lease_until = NULL
      WHERE tenant_id = $1 AND id = $2 AND credential_version = $3 AND refresh_lease_id = $4`,
    [account.tenantId, account.id, update.version, update.leaseId, update.sealed, update.keyId, update.expiresAt],
  );
  return rowCount === 1;
}

/** Ends our lease without a new credential; `needsReauth` when the service refused the refresh token. */
export async function releaseRefresh(
  db: Queryable,
  account: { tenantId: string; id: string },
  leaseId: string,
  needsReauth = false,
): Promise<void> {
  await db.query(
    `UPDATE accounts SET refresh_lease_id = NULL, refresh_lease_until = NULL,
            status = CASE WHEN $4 THEN 'needs_reauth' ELSE status END,
            updated_at = CASE WHEN $4 THEN now() ELSE updated_at END
      WHERE tenant_id = $1 AND id = $2 AND refresh_lease_id = $3`,
    [account.tenantId, account.id, leaseId, needsReauth],
  );
}
