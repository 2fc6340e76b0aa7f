import type { Config } from '../core/config.js';
import { clientMetadataDocumentUrl, oauthCallbackUrl } from '../core/urls.js';
import type { UpstreamOAuthOptions } from '../providers/mcp-upstream/index.js';
import type { Pool } from '../store/database.js';
import type { Keyring } from '../store/keyring.js';
import { clientRegistrationStore } from '../store/mcp-client-registrations.js';

/**
 * What `auth: oauth2` upstream MCP servers need from this deployment: the registrations table
 * (one per issuer, shared by every process) and Switchboard's own client URLs under PUBLIC_BASE_URL.
 */
export function upstreamOAuthOptions(config: Pick<Config, 'PUBLIC_BASE_URL'>, pool: Pool, keyring: Keyring): UpstreamOAuthOptions {
  return {
    registrations: clientRegistrationStore(pool, keyring),
    clientMetadataUrl: clientMetadataDocumentUrl(config),
    redirectUri: oauthCallbackUrl(config),
  };
}
