import type { Provider } from '../../providers/sdk/index.js';
import { type Account, markNeedsReauth, readCredential } from '../accounts/store/accounts.js';
import { checkContext } from './check-context.js';
import type { ConnectionServices } from './services.js';

type SessionCheckDeps = Pick<ConnectionServices, 'pool' | 'keyring' | 'registry' | 'config' | 'logger'>;

/** How long one `checkSession` may take before it counts as "could not tell". */
const CHECK_TIMEOUT_MS = 5_000;

type Verdict = boolean | undefined;
interface Entry {
  at: number;
  verdict: Promise<Verdict>;
}

/** Per process, per account and credential version: a reconnect starts a fresh entry. */
const verdicts = new Map<string, Entry>();

/**
 * `connected` for cookie integrations is the session's validity: each active cookie account of a
 * provider with a `checkSession` hook is checked against the service, at most once per
 * COOKIE_CHECK_TTL_SEC per account (concurrent callers share one check). A session the service
 * no longer knows marks the account needs_reauth (so tool calls answer needs_reauth too) and is
 * returned with that status; a check that cannot tell (network, 5xx, timeout) changes nothing.
 */
export async function withCookieSessionStatus(ctx: SessionCheckDeps, accounts: Account[]): Promise<Account[]> {
  return Promise.all(
    accounts.map(async (account) => {
      if (account.status !== 'active' || !account.hasCredential) return account;
      const provider = ctx.registry.get(account.integration);
      if (provider?.manifest.auth !== 'cookie' || !provider.checkSession) return account;
      const verdict = await cachedVerdict(ctx, provider, account);
      return verdict === false ? { ...account, status: 'needs_reauth' as const } : account;
    }),
  );
}

function cachedVerdict(ctx: SessionCheckDeps, provider: Provider, account: Account): Promise<Verdict> {
  const key = `${account.id}:${account.credentialVersion}`;
  const now = Date.now();
  const ttlMs = ctx.config.COOKIE_CHECK_TTL_SEC * 1000;
  const cached = verdicts.get(key);
  if (cached && now - cached.at < ttlMs) return cached.verdict;
  for (const [k, e] of verdicts) if (now - e.at >= ttlMs) verdicts.delete(k);
  const verdict = check(ctx, provider, account);
  verdicts.set(key, { at: now, verdict });
  return verdict;
}

async function check(ctx: SessionCheckDeps, provider: Provider, account: Account): Promise<Verdict> {
  const log = ctx.logger.child({ integration: account.integration, accountId: account.id });
  try {
    const stored = await readCredential(ctx.pool, ctx.keyring, account.tenantId, account.id);
    if (stored?.type !== 'cookie') return undefined;
    const valid = await provider.checkSession!(
      checkContext(ctx, {
        provider,
        credential: { type: 'cookie', cookies: stored.cookies ?? [] },
        caller: { tenantId: account.tenantId, userId: account.ownerUserId ?? '' },
        logger: log,
        timeoutMs: CHECK_TIMEOUT_MS,
      }),
    );
    if (valid) return true;
    // Only the credential that was checked: a reconnect in the meantime stays active.
    await markNeedsReauth(ctx.pool, account);
    log.info('the service no longer knows the captured session; account marked needs_reauth');
    return false;
  } catch (err) {
    log.warn({ err: (err as Error).message }, 'could not check the cookie session');
    return undefined;
  }
}
