import { createHash } from 'node:crypto';
import type { Config } from './config.js';

export const portalIntegrationUrl = (config: Pick<Config, 'PUBLIC_BASE_URL'>, integration: string) =>
  `${config.PUBLIC_BASE_URL}/portal/integrations/${encodeURIComponent(integration)}`;

export const oauthCallbackUrl = (config: Pick<Config, 'PUBLIC_BASE_URL'>) => `${config.PUBLIC_BASE_URL}/oauth/callback`;

/**
 * The callback of one discovered authorization server (RFC 9700 §4.4.2): a path of its own, named
 * by a digest of the issuer, so the callback knows which server a code came from, and a server
 * cannot have a code meant for another one's flow exchanged (OAuth mix-up).
 */
export function issuerCallbackUrl(config: Pick<Config, 'PUBLIC_BASE_URL'>, issuer: string): string {
  const canonical = URL.canParse(issuer) ? new URL(issuer).href : issuer;
  const key = createHash('sha256').update(canonical).digest('base64url').slice(0, 22);
  return `${oauthCallbackUrl(config)}/${key}`;
}

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
