import { randomUUID } from 'node:crypto';
import { setTimeout } from 'node:timers/promises';
import type { Pool } from '../../platform/database/database.js';
import type { Keyring } from '../../platform/database/keyring.js';
import type { ProviderRegistry } from '../../providers/registry.js';
import type { Credential } from '../../providers/sdk/index.js';
import { OAuthFlowError, type TokenSet } from '../../providers/sdk/oauth-client.js';
import { loadCredential, type SealedCredentialRow, type StoredCredential } from '../accounts/store/accounts.js';
import { type LoadedCredential, openLoadedCredential } from '../accounts/store/credential-seal.js';
import {
  claimRefresh,
  completeRefresh,
  type RefreshRow,
  readForRefresh,
  releaseRefresh,
  renewRefresh,
} from './store/credential-refresh.js';

/** Refresh this long before the access token expires. */
const REFRESH_MARGIN_MS = 60_000;

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
 * How long a refresh lease lasts: past the token request's own 30-second timeout (openid-client's
 * default), so a lease never lapses while its holder may still spend the refresh token; a holder
 * that died frees the account after this.
 */
const REFRESH_LEASE_MS = 60_000;
/**
 * A process waiting on another's refresh re-reads the account (one short query) after 50 ms, then
 * backing off to once a second, so waiters never crowd the pool while a token endpoint is slow.
 */
const REFRESH_POLL_FIRST_MS = 50;
const REFRESH_POLL_MAX_MS = 1_000;

/**
 * Loads and refreshes OAuth credentials. One refresh at a time per account: in this process a
 * single-flight promise; across processes a lease taken by compare-and-set on the account's
 * `credential_version` (features/connections/store/credential-refresh.ts). The holder calls the token endpoint with no
 * database connection held; the others re-read the row until the version moves on and use the
 * new token, so a rotating refresh token is spent once and a slow token endpoint holds no
 * connection of the pool.
 */
export class CredentialStore {
  private readonly inflight = new Map<string, Promise<LoadedCredential>>();

  constructor(
    private readonly pool: Pool,
    private readonly keyring: Keyring,
    private readonly registry: ProviderRegistry,
    private readonly onRefresh: (integration: string, outcome: 'ok' | 'failed') => void = () => {},
  ) {}

  /**
   * The account's credential, opened: from `row` when the caller already read the account's
   * sealed columns (listUsableAccountsWithSealedCredentials), else read now.
   */
  async load(account: { tenantId: string; id: string }, row?: SealedCredentialRow): Promise<LoadedCredential | undefined> {
    if (!row) return loadCredential(this.pool, this.keyring, account);
    return row.credential_sealed
      ? openLoadedCredential(this.keyring, account, { ...row, credential_sealed: row.credential_sealed })
      : undefined;
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
    const promise = this.refreshShared(account, usedVersion).finally(() => this.inflight.delete(account.id));
    this.inflight.set(account.id, promise);
    return promise;
  }

  private async refreshShared(
    account: { tenantId: string; id: string; integration: string },
    usedVersion: number | undefined,
  ): Promise<LoadedCredential> {
    const giveUpAt = Date.now() + REFRESH_LEASE_MS + 5_000;
    for (let pollMs = REFRESH_POLL_FIRST_MS; ; pollMs = Math.min(pollMs * 2, REFRESH_POLL_MAX_MS)) {
      const row = await readForRefresh(this.pool, account.tenantId, account.id);
      if (!row?.credential_sealed) throw new CredentialError('needs_reauth', 'the account has no credential');
      const current = this.open(account, { ...row, credential_sealed: row.credential_sealed });
      const alreadyRefreshed = usedVersion !== undefined ? current.version !== usedVersion : !this.needsRefresh(current);
      if (alreadyRefreshed) return current;
      if (row.status === 'needs_reauth') throw new CredentialError('needs_reauth', 'the service refused the refresh');
      if (!row.leased) {
        const leaseId = randomUUID();
        if (await claimRefresh(this.pool, account, current.version, leaseId, REFRESH_LEASE_MS)) {
          return this.refreshHoldingLease(account, current, leaseId);
        }
      }
      // Another process holds the lease: wait for its new version (or for its lease to lapse).
      if (Date.now() > giveUpAt) throw new CredentialError('refresh_failed', 'another refresh of this account did not finish in time');
      await setTimeout(pollMs * (0.8 + Math.random() * 0.4));
    }
  }

  private async refreshHoldingLease(
    account: { tenantId: string; id: string; integration: string },
    current: LoadedCredential,
    leaseId: string,
  ): Promise<LoadedCredential> {
    const flow = (await this.registry.forTenant(account.tenantId)).oauthFlow(account.integration);
    const refreshToken = current.credential.refreshToken;
    const dead = async (reason: string): Promise<LoadedCredential> => {
      // Only a refusal from the service marks the account (a network hiccup does not), and only
      // while the refused credential is still the stored one.
      await releaseRefresh(this.pool, account, leaseId, current.version);
      const newer = await this.newerThan(account, current.version);
      if (newer) return newer;
      this.onRefresh(this.metricLabel(account.integration), 'failed');
      throw new CredentialError('needs_reauth', reason);
    };
    if (!refreshToken || !flow) return dead('the service gave no refresh token');
    let tokens: TokenSet;
    // While the request is out, the lease is renewed: it lapses only when this process died, so
    // no other process spends the same refresh token because this one's token endpoint is slow.
    const renewal = setInterval(() => {
      renewRefresh(this.pool, account, leaseId, REFRESH_LEASE_MS).catch(() => {});
    }, REFRESH_LEASE_MS / 3);
    try {
      tokens = await flow.refresh(refreshToken, current.credential.oauth);
    } catch (err) {
      if (err instanceof OAuthFlowError && (err.code === 'invalid_grant' || err.code === 'unauthorized_client')) {
        return dead(`the service refused the refresh (${err.code})`);
      }
      await releaseRefresh(this.pool, account, leaseId);
      this.onRefresh(this.metricLabel(account.integration), 'failed');
      throw new CredentialError('refresh_failed', `could not refresh the token: ${(err as Error).message}`);
    } finally {
      clearInterval(renewal);
    }
    const credential: StoredCredential = {
      ...current.credential,
      accessToken: tokens.accessToken,
      // A service that rotates returns a new refresh token; one that does not keeps the old.
      refreshToken: tokens.refreshToken ?? refreshToken,
      tokenType: tokens.tokenType ?? current.credential.tokenType,
    };
    const expiresAt = tokens.expiresAt ?? null;
    // Stored even if the lease lapsed meanwhile: the old refresh token is spent, a rotated new one
    // exists only here. Only a newer credential (a reconnect, or another refresh) wins over it.
    const stored = await completeRefresh(this.pool, this.keyring, account, { version: current.version, credential, expiresAt });
    if (!stored) {
      await releaseRefresh(this.pool, account, leaseId);
      const newer = await this.newerThan(account, current.version);
      if (newer) return newer;
      throw new CredentialError('refresh_failed', 'the account changed while its token was being refreshed; try again');
    }
    this.onRefresh(this.metricLabel(account.integration), 'ok');
    return { credential, version: current.version + 1, expiresAt };
  }

  /** A tenant's own upstream server is counted as `tenant-upstream`: names tenants choose never become metric labels. */
  private metricLabel(integration: string): string {
    return this.registry.get(integration) ? integration : 'tenant-upstream';
  }

  /** The account's stored credential when it is newer than `version` and usable, else undefined. */
  private async newerThan(account: { tenantId: string; id: string }, version: number): Promise<LoadedCredential | undefined> {
    const row = await readForRefresh(this.pool, account.tenantId, account.id);
    if (!row?.credential_sealed || row.credential_version === version || row.status === 'needs_reauth') return undefined;
    return this.open(account, { ...row, credential_sealed: row.credential_sealed });
  }

  private open(account: { tenantId: string; id: string }, row: RefreshRow & { credential_sealed: string }): LoadedCredential {
    return openLoadedCredential(this.keyring, account, row);
  }
}
