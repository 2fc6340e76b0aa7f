/**
 * Switchboard's OAuth Client ID Metadata Document (draft-ietf-oauth-client-id-metadata-document,
 * MCP authorization 2025-11-25): its URL is its client id at every authorization server that
 * supports them, so no registration is needed. A public client (PKCE, no secret): the draft
 * forbids shared secrets in such a document.
 */
interface ClientMetadataDocument {
  client_id: string;
  client_name: string;
  client_uri: string;
  redirect_uris: string[];
  grant_types: string[];
  response_types: string[];
  token_endpoint_auth_method: 'none';
}

export const CLIENT_NAME = 'Switchboard';

export function clientMetadataDocument(input: { documentUrl: string; publicBaseUrl: string; redirectUri: string }): ClientMetadataDocument {
  return {
    client_id: input.documentUrl,
    client_name: CLIENT_NAME,
    client_uri: input.publicBaseUrl,
    redirect_uris: [input.redirectUri],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
}

/** A client id URL the draft accepts: https, with a path, no fragment, no credentials. */
export function isUsableClientIdUrl(value: string | undefined): value is string {
  if (!value || !URL.canParse(value)) return false;
  const url = new URL(value);
  return url.protocol === 'https:' && url.pathname !== '/' && !url.hash && !url.username && !url.password;
}
