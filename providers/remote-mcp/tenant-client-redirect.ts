import type { Config } from '../../core/config.js';
import { issuerCallbackUrl } from '../../core/urls.js';

/**
 * The redirect URI to register for a tenant's own OAuth client (an entry's `auth.clientId` with its
 * `issuer`): that issuer's own callback, never the one the deployment's clients share
 * (docs/reference/upstream-mcp-auth.md, "Callbacks"). Undefined for any other entry.
 */
export function tenantClientRedirectUri(config: Pick<Config, 'PUBLIC_BASE_URL'>, entry: Record<string, unknown>): string | undefined {
  const auth = entry.auth as { type?: unknown; clientId?: unknown; issuer?: unknown } | undefined;
  if (auth?.type !== 'oauth2' || typeof auth.clientId !== 'string' || typeof auth.issuer !== 'string') return undefined;
  return issuerCallbackUrl(config, auth.issuer);
}
