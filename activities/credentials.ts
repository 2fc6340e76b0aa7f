import { OAuthFlowError, refreshTokens } from '../providers/oauth-client.js';
import type { ProviderRegistry } from '../providers/registry.js';
import type { Credential } from '../providers/sdk.js';
import { credentialAad, type StoredCredential, setAccountStatus } from '../store/accounts.js';
import type { Pool } from '../store/database.js';
import type { Keyring } from '../store/keyring.js';
import { transaction } from '../store/queryable.js';

/** Refresh this long before the access token expires. */
export const REFRESH_MARGIN_MS = 60_000;

export interface LoadedCredential {
  credential: StoredCredential;
  version: number;
  expiresAt: Date | null;
}

export class CredentialError extends Error {
  constructor(
    readonly code: 'needs_reauth' | 'refresh_failed',
    message: string,
  ) {
    super(message);
    this.name = 'CredentialError';
  }
}

export function toToolCredential(stored: StoredCredential): Credential {
  switch (stored.type) {
    case 'oauth2':
      return { type: 'oauth2', accessToken: stored.accessToken ?? '', tokenType: stored.tokenType };
    case 'apikey':
      return { type: 'apikey', fields: stored.fields ?? {} };
    case 'cookie':
      return { type: 'cookie', cookies: stored.cookies ?? [] };
  }
}

/** Every secret string of a credential, for redaction. */
export function secretsOf(stored: StoredCredential): string[] {
  return [
    stored.accessToken,
    stored.refreshToken,
    ...Object.values(stored.fields ?? {}),
    ...(stored.cookies ?? []).map((c) => c.value),
  ].filter((s): s is string => typeof s === 'string' && s.length > 0);
}

/**
 * Loads and refreshes OAuth credentials. One refresh at a time per account: in this process a
 * single-flight promise, across processes the account's row lock. Whoever gets the lock second
 * sees the version moved on and uses the new token, so a rotating refresh token is spent once.
 */
export class CredentialStore {
  private readonly inflight = new Map<string, Promise<LoadedCredential>>();

  constructor(
    private readonly pool: Pool,
    private readonly keyring: Keyring,
    private readonly registry: ProviderRegistry,
    private readonly onRefresh: (integration: string, outcome: 'ok' | 'failed') => void = () => {},
  ) {}

  async load(account: { tenantId: string; id: string }): Promise<LoadedCredential | undefined> {
    const { rows } = await this.pool.query(
      'SELECT credential_sealed, credential_version, access_expires_at FROM accounts WHERE tenant_id = $1 AND id = $2',
      [account.tenantId, account.id],
    );
    return rows[0]?.credential_sealed ? this.open(account, rows[0]) : undefined;
  }

  needsRefresh(loaded: LoadedCredential): boolean {
    return (
      loaded.credential.type === 'oauth2' &&
      Boolean(loaded.credential.refreshToken) &&
      loaded.expiresAt !== null &&
      loaded.expiresAt.getTime() - Date.now() < REFRESH_MARGIN_MS
    );
  }

  /**
   * Refreshes unless someone already did: `usedVersion` is the version the caller holds (after
   * a 401); without it, refresh only if the token is still near expiry.
   */
  refresh(account: { tenantId: string; id: string; integration: string }, usedVersion?: number): Promise<LoadedCredential> {
    const running = this.inflight.get(account.id);
    if (running) return running;
    const promise = this.refreshLocked(account, usedVersion).finally(() => this.inflight.delete(account.id));
    this.inflight.set(account.id, promise);
    return promise;
  }

  private async refreshLocked(
    account: { tenantId: string; id: string; integration: string },
    usedVersion: number | undefined,
  ): Promise<LoadedCredential> {
    const endpoints = this.registry.oauth2(account.integration);
    type Result = { kind: 'loaded'; loaded: LoadedCredential; refreshed: boolean } | { kind: 'dead'; reason: string };
    const result = await transaction(this.pool, async (db): Promise<Result> => {
      const { rows } = await db.query(
        'SELECT credential_sealed, credential_version, access_expires_at FROM accounts WHERE tenant_id = $1 AND id = $2 FOR UPDATE',
        [account.tenantId, account.id],
      );
      if (!rows[0]?.credential_sealed) throw new CredentialError('needs_reauth', 'the account has no credential');
      const current = this.open(account, rows[0]);
      const alreadyRefreshed = usedVersion !== undefined ? current.version !== usedVersion : !this.needsRefresh(current);
      if (alreadyRefreshed) return { kind: 'loaded', loaded: current, refreshed: false };
      const refreshToken = current.credential.refreshToken;
      if (!refreshToken || !endpoints) return { kind: 'dead', reason: 'the service gave no refresh token' };
      try {
        const tokens = await refreshTokens(endpoints, refreshToken);
        const credential: StoredCredential = {
          ...current.credential,
          accessToken: tokens.accessToken,
          // A service that rotates returns a new refresh token; one that does not keeps the old.
          refreshToken: tokens.refreshToken ?? refreshToken,
          tokenType: tokens.tokenType ?? current.credential.tokenType,
        };
        const sealed = this.keyring.encrypt(JSON.stringify(credential), credentialAad(account.tenantId, account.id));
        await db.query(
          `UPDATE accounts SET credential_sealed = $3, credential_key_id = $4, access_expires_at = $5,
              credential_version = credential_version + 1, status = 'active', updated_at = now()
            WHERE tenant_id = $1 AND id = $2`,
          [account.tenantId, account.id, sealed, this.keyring.activeKeyId, tokens.expiresAt ?? null],
        );
        return {
          kind: 'loaded',
          loaded: { credential, version: current.version + 1, expiresAt: tokens.expiresAt ?? null },
          refreshed: true,
        };
      } catch (err) {
        if (err instanceof OAuthFlowError && (err.code === 'invalid_grant' || err.code === 'unauthorized_client')) {
          return { kind: 'dead', reason: `the service refused the refresh (${err.code})` };
        }
        this.onRefresh(account.integration, 'failed');
        throw new CredentialError('refresh_failed', `could not refresh the token: ${(err as Error).message}`);
      }
    });
    if (result.kind === 'dead') {
      // Only a refusal from the service marks the account; a network hiccup does not.
      await setAccountStatus(this.pool, account.tenantId, account.id, 'needs_reauth');
      this.onRefresh(account.integration, 'failed');
      throw new CredentialError('needs_reauth', result.reason);
    }
    if (result.refreshed) this.onRefresh(account.integration, 'ok');
    return result.loaded;
  }

  private open(
    account: { tenantId: string; id: string },
    row: { credential_sealed: string; credential_version: number; access_expires_at: Date | null },
  ): LoadedCredential {
    return {
      credential: JSON.parse(this.keyring.decrypt(row.credential_sealed, credentialAad(account.tenantId, account.id))),
      version: row.credential_version,
      expiresAt: row.access_expires_at,
    };
  }
}
