import type { Caller } from '../core/caller.js';
import type { Config } from '../core/config.js';
import { MetaToolError } from '../core/errors.js';
import { connectRefusal } from '../core/policy.js';
import type { TokenSigner } from '../core/signed-tokens.js';
import { portalIntegrationUrl } from '../core/urls.js';
import type { ProviderRegistry } from '../providers/registry.js';
import { createAttempt } from '../store/connection-attempts.js';
import type { Pool } from '../store/database.js';
import { getTenant } from '../store/tenants.js';
import { getUser } from '../store/users.js';

export interface PreparedConnection {
  connectionId: string;
  type: 'oauth2' | 'cookie';
  /** The portal link for the human: signed, bound to the caller, valid as long as the attempt. */
  url: string;
  ttlSec: number;
}

export interface PrepareDeps {
  pool: Pool;
  registry: ProviderRegistry;
  config: Config;
  signer: TokenSigner;
}

/**
 * Refuses (403) a user who may not connect `integration` now — for the organisation when
 * `accountScope` is `tenant` — by the tenant's one connect rule (core/policy.ts `connectRefusal`).
 * The user's roles and the tenant's settings are read fresh from the store, never from a session
 * or a link made earlier: every step of a connection calls this, so a role taken away between
 * `connect` and the consent page stops the connection.
 */
export async function assertMayConnect(
  pool: Pool,
  who: { tenantId: string; userId: string },
  integration: string,
  accountScope: 'user' | 'tenant' = 'user',
): Promise<void> {
  const refusal = await whyMayNotConnect(pool, who, integration, accountScope);
  if (refusal) throw new MetaToolError({ error: refusal }, 403);
}

/** The same rule as `assertMayConnect`, answered as the reason (for a page), or undefined when allowed. */
export async function whyMayNotConnect(
  pool: Pool,
  who: { tenantId: string; userId: string },
  integration: string,
  accountScope: 'user' | 'tenant' = 'user',
): Promise<string | undefined> {
  const [user, tenant] = await Promise.all([getUser(pool, who.userId), getTenant(pool, who.tenantId)]);
  if (!user || user.tenantId !== who.tenantId) return 'This user no longer exists.';
  return connectRefusal(tenant?.settings ?? {}, user.roles, integration, accountScope === 'tenant');
}

/**
 * Checks that `integration` can be connected by this caller (the spec's error strings, then the
 * tenant's connect rule with the caller's roles read fresh), creates a PENDING attempt owned by the
 * caller and signs its portal link. The caller then starts the attempt's workflow: the HTTP
 * handler as a top-level workflow, an agent's workflow as a child. `accountScope: 'tenant'` makes
 * the resulting account the organisation's: only an administrator may start one.
 */
export async function prepareConnection(
  deps: PrepareDeps,
  caller: Pick<Caller, 'tenantId' | 'userId'>,
  integration: string,
  options: { ttlSec?: number; accountScope?: 'user' | 'tenant' } = {},
): Promise<PreparedConnection> {
  const provider = deps.registry.get(integration);
  if (!provider) throw new MetaToolError({ error: 'Integration not found' }, 404);
  const { auth } = provider.manifest;
  if (auth === 'none') throw new MetaToolError({ error: `${integration} is built-in and always connected — no connect needed.` }, 400);
  if (auth === 'apikey') {
    throw new MetaToolError(
      {
        error: `${integration} is connected with an API key in the portal, not through connect(). Send the user to ${portalIntegrationUrl(deps.config, integration)}`,
      },
      400,
    );
  }
  if (auth === 'oauth2' && !deps.registry.isConfigured(integration)) {
    const vars = deps.registry.envVarNames(integration);
    throw new MetaToolError({ error: `${integration}: ${vars.clientId} / ${vars.clientSecret} not configured` }, 503);
  }
  await assertMayConnect(deps.pool, caller, integration, options.accountScope);
  const ttlSec = options.ttlSec ?? deps.config.CONNECTION_TTL_SEC;
  const attempt = await createAttempt(deps.pool, { ...caller, integration, authMode: auth, ttlSec, accountScope: options.accountScope });
  const token = await deps.signer.sign('connect-link', { a: attempt.id, u: caller.userId, t: caller.tenantId }, ttlSec);
  return {
    connectionId: attempt.id,
    type: auth,
    url: `${deps.config.PUBLIC_BASE_URL}/connect/${encodeURIComponent(integration)}?t=${token}`,
    ttlSec,
  };
}
