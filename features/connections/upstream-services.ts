import type { Config } from '../../core/config.js';
import type { UpstreamCatalogStore } from '../../core/ports/upstream-tool-catalogs.js';
import { clientMetadataDocumentUrl, issuerCallbackUrl, oauthCallbackUrl } from '../../core/urls.js';
import type { Pool } from '../../platform/database/database.js';
import type { Keyring } from '../../platform/database/keyring.js';
import { clientRegistrationStore } from '../../platform/database/mcp-client-registrations.js';
import { upstreamCatalogStore } from '../../platform/database/upstream-tool-catalogs.js';
import type { UpstreamOAuthOptions } from '../../providers/remote-mcp/index.js';

/**
 * What upstream MCP servers need from this deployment: for `auth: oauth2`, the registrations table
 * (one per issuer, shared by every process) and Switchboard's own client and callback URLs under
 * PUBLIC_BASE_URL; for search, the table where each server's last tool listing is shared.
 */
export function upstreamServices(
  config: Pick<Config, 'PUBLIC_BASE_URL'>,
  pool: Pool,
  keyring: Keyring,
): { oauth: UpstreamOAuthOptions; catalog: UpstreamCatalogStore } {
  return {
    oauth: {
      registrationsFor: (scope) => clientRegistrationStore(pool, keyring, scope),
      clientMetadataUrl: clientMetadataDocumentUrl(config),
      callbackUrl: oauthCallbackUrl(config),
      issuerCallbackUrl: (issuer) => issuerCallbackUrl(config, issuer),
    },
    catalog: upstreamCatalogStore(pool),
  };
}
