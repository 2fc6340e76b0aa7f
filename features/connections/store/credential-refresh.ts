import type { Keyring } from '../../../platform/database/keyring.js';
import type { Queryable } from '../../../platform/database/queryable.js';
import type { StoredCredential } from '../../accounts/store/accounts.js';
import { sealCredential } from '../../accounts/store/credential-seal.js';

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
 * Keeps our lease from lapsing while our token request is still out (a lease only lapses when its
 * holder died). False when the lease is no longer ours.
 */
export async function renewRefresh(
  db: Queryable,
  account: { tenantId: string; id: string },
  leaseId: string,
  leaseMs: number,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE accounts SET refresh_lease_until = now() + make_interval(secs => $4::double precision / 1000)
      WHERE tenant_id = $1 AND id = $2 AND refresh_lease_id = $3`,
    [account.tenantId, account.id, leaseId, leaseMs],
  );
  return rowCount === 1;
}

/**
 * Stores the refreshed credential and ends the lease, only if the credential is still the one
 * refreshed (a reconnect in between wins). Not conditional on still holding the lease: when the
 * answer arrives after the lease lapsed, the refresh token it replaces is spent already, and a
 * rotating service's new one exists only in this answer, so dropping it would lose the grant.
 * False when it was not stored.
 */
export async function completeRefresh(
  db: Queryable,
  keyring: Keyring,
  account: { tenantId: string; id: string },
  update: { version: number; credential: StoredCredential; expiresAt: Date | null },
): Promise<boolean> {
  const { sealed, keyId } = sealCredential(keyring, account, update.credential);
  const { rowCount } = await db.query(
    `UPDATE accounts SET credential_sealed = $4, credential_key_id = $5, access_expires_at = $6,
            credential_version = credential_version + 1, status = 'active', updated_at = now(),
            refresh_lease_id = NULL, refresh_lease_until = NULL
      WHERE tenant_id = $1 AND id = $2 AND credential_version = $3`,
    [account.tenantId, account.id, update.version, sealed, keyId, update.expiresAt],
  );
  return rowCount === 1;
}

/**
 * Ends our lease without a new credential. `refusedVersion`: the service refused the refresh token
 * of that credential version, so the account needs re-authorisation — unless the version moved on
 * meanwhile (someone stored a newer credential; the refusal was about a spent token).
 */
export async function releaseRefresh(
  db: Queryable,
  account: { tenantId: string; id: string },
  leaseId: string,
  refusedVersion?: number,
): Promise<void> {
  await db.query(
    `UPDATE accounts SET status = CASE WHEN credential_version = $4::int THEN 'needs_reauth' ELSE status END,
            updated_at = CASE WHEN credential_version = $4::int THEN now() ELSE updated_at END,
            refresh_lease_id = CASE WHEN refresh_lease_id = $3 THEN NULL ELSE refresh_lease_id END,
            refresh_lease_until = CASE WHEN refresh_lease_id = $3 THEN NULL ELSE refresh_lease_until END
      WHERE tenant_id = $1 AND id = $2 AND (refresh_lease_id = $3 OR credential_version = $4::int)`,
    [account.tenantId, account.id, leaseId, refusedVersion ?? null],
  );
}
