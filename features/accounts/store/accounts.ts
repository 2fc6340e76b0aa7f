import type { OAuthContext } from '../../../core/oauth-context.js';
import { sharingAdmits } from '../../../core/policy.js';
import type { Keyring } from '../../../platform/database/keyring.js';
import { storableText } from '../../../platform/database/postgres-text.js';
import { inTransaction, lockKey, type Queryable } from '../../../platform/database/queryable.js';
import { newId } from '../../../platform/database/random-ids.js';
import { credentialAad, type LoadedCredential, openCredential, openLoadedCredential, sealCredential } from './credential-seal.js';

export type AccountScope = 'user' | 'tenant';
export type AccountStatus = 'active' | 'needs_reauth';

export interface Account {
  id: string;
  tenantId: string;
  ownerUserId: string | null;
  scope: AccountScope;
  integration: string;
  label: string;
  isDefault: boolean;
  sharingRoles: string[];
  status: AccountStatus;
  grantedScopes: string[];
  accessExpiresAt: Date | null;
  credentialVersion: number;
  hasCredential: boolean;
}

/** What is sealed in `credential_sealed`; never leaves an activity or a request handler. */
export interface StoredCredential {
  type: 'oauth2' | 'apikey' | 'cookie';
  accessToken?: string;
  refreshToken?: string;
  tokenType?: string;
  fields?: Record<string, string>;
  cookies?: { name: string; value: string; domain: string; path?: string }[];
  /** Discovered OAuth (upstream MCP servers): the authorization server, client and resource its refreshes go to. */
  oauth?: OAuthContext;
  /** The provider's `credentialBinding` when it was stored (an upstream server's URL): used only with that one. */
  boundTo?: string;
}

const COLUMNS = `id, tenant_id AS "tenantId", owner_user_id AS "ownerUserId", scope, integration, label,
  is_default AS "isDefault", sharing_roles AS "sharingRoles", status, granted_scopes AS "grantedScopes",
  access_expires_at AS "accessExpiresAt", credential_version AS "credentialVersion",
  (credential_sealed IS NOT NULL) AS "hasCredential"`;

export async function getAccount(db: Queryable, tenantId: string, id: string): Promise<Account | undefined> {
  const { rows } = await db.query(`SELECT ${COLUMNS} FROM accounts WHERE tenant_id = $1 AND id = $2`, [tenantId, id]);
  return rows[0];
}

/**
 * The accounts a caller may use: their own first, then the organisation's whose sharing admits
 * one of the caller's roles. Defaults first within each group.
 */
export async function listUsableAccounts(
  db: Queryable,
  caller: { tenantId: string; userId: string; roles: readonly string[] },
  integration?: string,
): Promise<Account[]> {
  // An integration name the agent chose may hold what no stored name can: then nothing matches.
  if (integration !== undefined && !storableText(integration)) return [];
  const { rows } = await db.query<Account>(
    `SELECT ${COLUMNS} FROM accounts
      WHERE tenant_id = $1 AND (owner_user_id = $2 OR scope = 'tenant') AND ($3::text IS NULL OR integration = $3)
      ORDER BY (scope = 'user') DESC, is_default DESC, created_at`,
    [caller.tenantId, caller.userId, integration ?? null],
  );
  return rows.filter((a) => a.scope === 'user' || sharingAdmits(a.sharingRoles, caller.roles));
}

/** An account row's credential columns as stored (sealed): opened only for the account a call uses. */
export interface SealedCredentialRow {
  credential_sealed: string | null;
  credential_version: number;
  access_expires_at: Date | null;
}

/**
 * listUsableAccounts with each account's sealed credential columns in the same round trip, for a
 * tool call that lists the caller's accounts and then loads the chosen one's credential. Nothing
 * is decrypted here; the credential is the row's as of this read, exactly what loadCredential
 * would read a moment later (a refresh compares versions either way).
 */
export async function listUsableAccountsWithSealedCredentials(
  db: Queryable,
  caller: { tenantId: string; userId: string; roles: readonly string[] },
  integration: string,
): Promise<{ accounts: Account[]; sealed: Map<string, SealedCredentialRow> }> {
  const { rows } = await db.query<Account & { credentialSealed: string | null }>(
    `SELECT ${COLUMNS}, credential_sealed AS "credentialSealed" FROM accounts
      WHERE tenant_id = $1 AND (owner_user_id = $2 OR scope = 'tenant') AND integration = $3
      ORDER BY (scope = 'user') DESC, is_default DESC, created_at`,
    [caller.tenantId, caller.userId, integration],
  );
  const sealed = new Map<string, SealedCredentialRow>();
  const accounts: Account[] = [];
  for (const { credentialSealed, ...account } of rows) {
    if (account.scope !== 'user' && !sharingAdmits(account.sharingRoles, caller.roles)) continue;
    accounts.push(account);
    sealed.set(account.id, {
      credential_sealed: credentialSealed,
      credential_version: account.credentialVersion,
      access_expires_at: account.accessExpiresAt,
    });
  }
  return { accounts, sealed };
}

/** The organisation's (tenant-scoped) accounts, defaults first within each integration. */
export async function listTenantAccounts(db: Queryable, tenantId: string): Promise<Account[]> {
  const { rows } = await db.query<Account>(
    `SELECT ${COLUMNS} FROM accounts WHERE tenant_id = $1 AND scope = 'tenant' ORDER BY integration, is_default DESC, created_at`,
    [tenantId],
  );
  return rows;
}

/** An organisation account by id alone (the admin CLI knows no tenant); user accounts are not found. */
export async function findTenantAccount(db: Queryable, id: string): Promise<Account | undefined> {
  const { rows } = await db.query<Account>(`SELECT ${COLUMNS} FROM accounts WHERE id = $1 AND scope = 'tenant'`, [id]);
  return rows[0];
}

/** Replaces an organisation account's sharing roles; undefined when there is no such organisation account. */
export async function setSharingRoles(db: Queryable, tenantId: string, id: string, roles: string[]): Promise<Account | undefined> {
  const { rows } = await db.query<Account>(
    `UPDATE accounts SET sharing_roles = $3, updated_at = now() WHERE tenant_id = $1 AND id = $2 AND scope = 'tenant' RETURNING ${COLUMNS}`,
    [tenantId, id, roles],
  );
  return rows[0];
}

export interface NewAccount {
  tenantId: string;
  ownerUserId: string | null;
  integration: string;
  label: string;
  sharingRoles?: string[];
  grantedScopes?: string[];
  accessExpiresAt?: Date | null;
  externalId?: string | null;
  credential?: StoredCredential;
}

/**
 * Stores a new account with its sealed credential. It becomes the owner's default for the
 * integration when the owner has none yet.
 */
export function insertAccount(db: Queryable, keyring: Keyring, input: NewAccount): Promise<Account> {
  return inTransaction(db, async (tx) => {
    await lockOwnerIntegration(tx, input);
    return insertLocked(tx, keyring, input);
  });
}

/** Two completions for one owner and integration must not both decide they are the default. */
const lockOwnerIntegration = (db: Queryable, input: Pick<NewAccount, 'tenantId' | 'ownerUserId' | 'integration'>) =>
  lockKey(db, `accounts:${input.tenantId}:${input.ownerUserId ?? ''}:${input.integration}`);

async function insertLocked(db: Queryable, keyring: Keyring, input: NewAccount): Promise<Account> {
  const id = newId('account');
  const sealed = input.credential ? sealCredential(keyring, { tenantId: input.tenantId, id }, input.credential) : undefined;
  const { rows } = await db.query(
    `INSERT INTO accounts (id, tenant_id, owner_user_id, scope, integration, label, is_default, sharing_roles,
        credential_sealed, credential_key_id, granted_scopes, access_expires_at, external_id)
     VALUES ($1, $2, $3, $4, $5, $6,
        NOT EXISTS (SELECT 1 FROM accounts WHERE tenant_id = $2 AND owner_user_id IS NOT DISTINCT FROM $3
                      AND integration = $5 AND is_default),
        $7, $8, $9, $10, $11, $12)
     RETURNING ${COLUMNS}`,
    [
      id,
      input.tenantId,
      input.ownerUserId,
      input.ownerUserId ? 'user' : 'tenant',
      input.integration,
      input.label,
      input.sharingRoles ?? [],
      sealed?.sealed ?? null,
      sealed?.keyId ?? null,
      input.grantedScopes ?? [],
      input.accessExpiresAt ?? null,
      input.externalId ?? null,
    ],
  );
  return rows[0];
}

export async function readCredential(db: Queryable, keyring: Keyring, tenantId: string, id: string): Promise<StoredCredential | undefined> {
  const { rows } = await db.query('SELECT credential_sealed FROM accounts WHERE tenant_id = $1 AND id = $2', [tenantId, id]);
  const sealed = rows[0]?.credential_sealed as string | undefined;
  return sealed ? openCredential(keyring, { tenantId, id }, sealed) : undefined;
}

/** The account's credential with its version and expiry, as a tool call loads it. */
export async function loadCredential(
  db: Queryable,
  keyring: Keyring,
  account: { tenantId: string; id: string },
): Promise<LoadedCredential | undefined> {
  const { rows } = await db.query(
    'SELECT credential_sealed, credential_version, access_expires_at FROM accounts WHERE tenant_id = $1 AND id = $2',
    [account.tenantId, account.id],
  );
  return rows[0]?.credential_sealed ? openLoadedCredential(keyring, account, rows[0]) : undefined;
}

/** Writes a new credential only if nobody else wrote one since `expectedVersion` was read. */
export async function replaceCredential(
  db: Queryable,
  keyring: Keyring,
  account: { tenantId: string; id: string },
  credential: StoredCredential,
  options: { expectedVersion?: number; accessExpiresAt?: Date | null; grantedScopes?: string[] },
): Promise<boolean> {
  const { sealed, keyId } = sealCredential(keyring, account, credential);
  const { rowCount } = await db.query(
    `UPDATE accounts SET credential_sealed = $3, credential_key_id = $4, access_expires_at = $5,
        granted_scopes = coalesce($6, granted_scopes), credential_version = credential_version + 1,
        status = 'active', step_up_scopes = '{}', updated_at = now()
      WHERE tenant_id = $1 AND id = $2 AND ($7::int IS NULL OR credential_version = $7)`,
    [
      account.tenantId,
      account.id,
      sealed,
      keyId,
      options.accessExpiresAt ?? null,
      options.grantedScopes ?? null,
      options.expectedVersion ?? null,
    ],
  );
  return (rowCount ?? 0) > 0;
}

export async function setAccountStatus(db: Queryable, tenantId: string, id: string, status: AccountStatus): Promise<void> {
  await db.query('UPDATE accounts SET status = $3, updated_at = now() WHERE tenant_id = $1 AND id = $2', [tenantId, id, status]);
}

/**
 * Marks an active account needs_reauth, but only while it still holds the credential at
 * `credentialVersion`: a reconnect since that credential was checked stays active.
 */
export async function markNeedsReauth(db: Queryable, account: Pick<Account, 'tenantId' | 'id' | 'credentialVersion'>): Promise<void> {
  await db.query(
    `UPDATE accounts SET status = 'needs_reauth', updated_at = now()
      WHERE tenant_id = $1 AND id = $2 AND credential_version = $3 AND status = 'active'`,
    [account.tenantId, account.id, account.credentialVersion],
  );
}

/**
 * The service asked for more scopes than the account's token has (a 403 `insufficient_scope`):
 * the next connect of its owner asks for `scopes` too. The account keeps its status — it still
 * does what it was granted (an organisation account stays usable by every member); a reconnect
 * that stores a new credential clears them.
 */
export async function markStepUp(db: Queryable, account: Pick<Account, 'tenantId' | 'id'>, scopes: string[]): Promise<void> {
  await db.query('UPDATE accounts SET step_up_scopes = $3, updated_at = now() WHERE tenant_id = $1 AND id = $2', [
    account.tenantId,
    account.id,
    scopes,
  ]);
}

/** Scopes a step-up asked for on the accounts a new connect of this owner would replace. */
export async function stepUpScopesFor(
  db: Queryable,
  owner: { tenantId: string; ownerUserId: string | null; integration: string },
): Promise<string[]> {
  const { rows } = await db.query(
    `SELECT DISTINCT unnest(step_up_scopes) AS scope FROM accounts
      WHERE tenant_id = $1 AND owner_user_id IS NOT DISTINCT FROM $2 AND integration = $3 ORDER BY 1`,
    [owner.tenantId, owner.ownerUserId, owner.integration],
  );
  return rows.map((r) => r.scope as string);
}

export async function deleteAccount(db: Queryable, tenantId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM accounts WHERE tenant_id = $1 AND id = $2', [tenantId, id]);
  return (rowCount ?? 0) > 0;
}

/**
 * Re-seals every credential under the active key, and those sealed before keys were derived per
 * purpose (`v1.`) under the at-rest key; returns how many rows moved.
 */
export async function resealCredentials(db: Queryable, keyring: Keyring): Promise<number> {
  const { rows } = await db.query(
    `SELECT id, tenant_id, credential_sealed FROM accounts
      WHERE credential_sealed IS NOT NULL AND (credential_key_id <> $1 OR credential_sealed LIKE 'v1.%')`,
    [keyring.activeKeyId],
  );
  for (const row of rows) {
    const aad = credentialAad(row.tenant_id, row.id);
    const resealed = keyring.encrypt(keyring.decrypt(row.credential_sealed, aad), aad);
    await db.query('UPDATE accounts SET credential_sealed = $2, credential_key_id = $3 WHERE id = $1 AND credential_sealed = $4', [
      row.id,
      resealed,
      keyring.activeKeyId,
      row.credential_sealed,
    ]);
  }
  return rows.length;
}

/**
 * Stores the credential of a completed connection: a reconnect of the same service account
 * (same external id) refreshes that account in place; anything else adds an account.
 */
export async function saveConnectedAccount(
  db: Queryable,
  keyring: Keyring,
  input: NewAccount & { credential: StoredCredential },
): Promise<Account> {
  // Callers run this in a transaction: concurrent completions for one owner and integration
  // queue here, so they neither both become the default nor both insert one external account.
  await lockOwnerIntegration(db, input);
  if (input.externalId) {
    const { rows } = await db.query(
      `SELECT id FROM accounts WHERE tenant_id = $1 AND owner_user_id IS NOT DISTINCT FROM $2 AND integration = $3 AND external_id = $4`,
      [input.tenantId, input.ownerUserId, input.integration, input.externalId],
    );
    if (rows[0]) {
      const id = rows[0].id as string;
      await replaceCredential(db, keyring, { tenantId: input.tenantId, id }, input.credential, {
        accessExpiresAt: input.accessExpiresAt ?? null,
        grantedScopes: input.grantedScopes,
      });
      await db.query('UPDATE accounts SET label = $3 WHERE tenant_id = $1 AND id = $2', [input.tenantId, id, input.label]);
      return (await getAccount(db, input.tenantId, id)) as Account;
    }
  }
  return insertLocked(db, keyring, input);
}

/** Renames an account; undefined when there is no such account in the tenant. */
export async function renameAccount(db: Queryable, tenantId: string, id: string, label: string): Promise<Account | undefined> {
  const { rows } = await db.query<Account>(
    `UPDATE accounts SET label = $3, updated_at = now() WHERE tenant_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
    [tenantId, id, label],
  );
  return rows[0];
}

/**
 * Makes an account its owner's default for its integration (for an organisation account: the
 * organisation's default), the previous default stepping down in the same transaction.
 */
export function setDefaultAccount(db: Queryable, tenantId: string, id: string): Promise<Account | undefined> {
  return inTransaction(db, async (tx) => {
    const account = await getAccount(tx, tenantId, id);
    if (!account) return undefined;
    await lockOwnerIntegration(tx, account);
    await tx.query(
      `UPDATE accounts SET is_default = false, updated_at = now()
        WHERE tenant_id = $1 AND owner_user_id IS NOT DISTINCT FROM $2 AND integration = $3 AND is_default AND id <> $4`,
      [tenantId, account.ownerUserId, account.integration, id],
    );
    const { rows } = await tx.query<Account>(
      `UPDATE accounts SET is_default = true, updated_at = now() WHERE tenant_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
      [tenantId, id],
    );
    return rows[0];
  });
}

/**
 * Puts a new credential on an existing account (an organisation account created without one, or
 * one whose key stopped working) and records which service account it belongs to; the account
 * becomes active again and keeps its label.
 */
export function attachCredential(
  db: Queryable,
  keyring: Keyring,
  account: { tenantId: string; id: string },
  input: { credential: StoredCredential; externalId?: string | null },
): Promise<Account | undefined> {
  return inTransaction(db, async (tx) => {
    if (!(await replaceCredential(tx, keyring, account, input.credential, {}))) return undefined;
    await tx.query('UPDATE accounts SET external_id = coalesce($3, external_id) WHERE tenant_id = $1 AND id = $2', [
      account.tenantId,
      account.id,
      input.externalId ?? null,
    ]);
    return getAccount(tx, account.tenantId, account.id);
  });
}
