import type { Request, Response } from 'express';
import type { Config } from '../../../core/config.js';
import { clientMetadataDocumentUrl, oauthCallbackUrl } from '../../../core/urls.js';
import { clientMetadataDocument } from '../../../providers/remote-mcp/oauth-client/client-metadata-document.js';

/**
 * GET /oauth/client-metadata.json — Switchboard's Client ID Metadata Document, fetched by the
 * authorization servers of upstream MCP servers that accept URL client ids. Public by design (it
 * holds no secret: a public client with PKCE); built from configuration alone, never from the
 * request, so its `client_id` and redirect URI are always the configured ones.
 */
export function serveClientMetadata(config: Pick<Config, 'PUBLIC_BASE_URL'>) {
  const body = JSON.stringify(
    clientMetadataDocument({
      documentUrl: clientMetadataDocumentUrl(config),
      publicBaseUrl: config.PUBLIC_BASE_URL,
      redirectUri: oauthCallbackUrl(config),
    }),
  );
  return (_req: Request, res: Response) => {
    res.set('cache-control', 'public, max-age=3600').type('application/json').send(body);
  };
}
