import type { Config } from './config.js';

export const portalIntegrationUrl = (config: Pick<Config, 'PUBLIC_BASE_URL'>, integration: string) =>
  `${config.PUBLIC_BASE_URL}/portal/integrations/${encodeURIComponent(integration)}`;

export const oauthCallbackUrl = (config: Pick<Config, 'PUBLIC_BASE_URL'>) => `${config.PUBLIC_BASE_URL}/oauth/callback`;

/** Only same-site paths may be a post-sign-in destination (no open redirect). */
export function safeNext(next: unknown): string {
  return typeof next === 'string' && next.startsWith('/') && !next.startsWith('//') && !next.includes('\\') ? next : '/portal';
}

/**
 * Switchboard's OAuth Client ID Metadata Document: its URL is Switchboard's client id at every
 * authorization server that supports such documents (upstream MCP servers' OAuth).
 */
export const clientMetadataDocumentUrl = (config: Pick<Config, 'PUBLIC_BASE_URL'>) =>
  `${config.PUBLIC_BASE_URL}/oauth/client-metadata.json`;
