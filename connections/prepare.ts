import type { CallerOwner } from '../core/caller.js';
import { MetaToolError } from '../core/errors.js';
import { portalIntegrationUrl } from '../core/urls.js';
import { createAttempt } from '../store/connection-attempts.js';
import { assertMayConnect } from './connect-rule.js';
import { type ConnectionServices, forTenant } from './services.js';

export interface PreparedConnection {
  connectionId: string;
  type: 'oauth2' | 'cookie';
  /** The portal link for the human: signed, bound to the caller, valid as long as the attempt. */
  url: string;
  ttlSec: number;
}

export type PrepareDeps = Pick<ConnectionServices, 'pool' | 'registry' | 'config' | 'signer'>;

/**
 * Checks that `integration` can be connected by this caller (the spec's error strings, then the
 * tenant's connect rule with the caller's roles read fresh), creates a PENDING attempt owned by the
 * caller and signs its portal link. The caller then starts the attempt's workflow: the HTTP
 * handler as a top-level workflow, an agent's workflow as a child. `accountScope: 'tenant'` makes
 * the resulting account the organisation's: only an administrator may start one.
 */
export async function prepareConnection(
  deps: PrepareDeps,
  caller: CallerOwner,
  integration: string,
  options: { ttlSec?: number; accountScope?: 'user' | 'tenant' } = {},
): Promise<PreparedConnection> {
  const { registry } = await forTenant(deps, caller.tenantId);
  const provider = registry.get(integration);
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
  if (auth === 'oauth2' && !registry.isConfigured(integration)) {
    const vars = registry.envVarNames(integration);
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
