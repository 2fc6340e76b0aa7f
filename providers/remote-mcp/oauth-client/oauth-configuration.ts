import * as oidc from 'openid-client';
import type { EgressOptions, GuardedFetch } from '../../sdk/guarded-fetch.js';
import type { ClientIdentity } from './client-identity.js';
import { mcpAuthFetch } from './egress.js';
import type { AuthorizationServerMetadata } from './metadata.js';
import { McpAuthError } from './oauth-errors.js';

/**
 * openid-client's configuration for one (authorization server, client): every request it makes
 * (token, refresh, revocation, JWKS) goes through the guarded fetch, so the network policy and the
 * response cap hold there too, and plain http is accepted only where the guard allows it.
 */
export function oauthConfiguration(
  as: AuthorizationServerMetadata,
  client: ClientIdentity,
  options: EgressOptions & { fetch?: GuardedFetch } = {},
): oidc.Configuration {
  if (client.issuer !== as.issuer) throw new McpAuthError('issuer_mismatch', `the client belongs to ${client.issuer}, not ${as.issuer}`);
  const auth =
    client.tokenEndpointAuthMethod === 'none' || !client.clientSecret
      ? oidc.None()
      : client.tokenEndpointAuthMethod === 'client_secret_post'
        ? oidc.ClientSecretPost(client.clientSecret)
        : oidc.ClientSecretBasic(client.clientSecret);
  const config = new oidc.Configuration(as as oidc.ServerMetadata, client.clientId, undefined, auth);
  const fetch = options.fetch ?? mcpAuthFetch(options);
  config[oidc.customFetch] = (url, init) => fetch(url, init as RequestInit);
  // The guard already refused plain http off the operator's allow-list; what reaches here may use it.
  oidc.allowInsecureRequests(config);
  return config;
}

/** openid-client's failures as McpAuthErrors whose messages hold no secret. */
export function describeOAuthFailure(err: unknown): McpAuthError {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof McpAuthError) return e;
    if ((e as { code?: string }).code === 'response_too_large')
      return new McpAuthError('response_too_large', 'the authorization server answered more than Switchboard reads');
  }
  if (err instanceof oidc.ResponseBodyError) {
    const code = err.error === 'invalid_client' ? 'invalid_client' : err.error;
    return new McpAuthError(
      code,
      `the authorization server answered ${err.error}${err.error_description ? `: ${err.error_description.slice(0, 200)}` : ''}`,
      err.status,
    );
  }
  if (err instanceof oidc.AuthorizationResponseError) {
    return new McpAuthError(
      err.error,
      `the authorization was refused: ${err.error}${err.error_description ? ` (${err.error_description.slice(0, 200)})` : ''}`,
    );
  }
  const e = err as { code?: string; message?: string; cause?: { message?: string } };
  // oauth4webapi's words for a callback of another flow: a foreign or missing `iss`, another `state`.
  const detail = `${e.message ?? ''} ${e.cause?.message ?? ''}`;
  if (e.code === 'OAUTH_INVALID_RESPONSE' && /"iss"|"state"/.test(detail)) {
    return new McpAuthError(
      'callback_mismatch',
      `the callback does not belong to this flow: ${(e.cause?.message ?? e.message ?? '').slice(0, 200)}`,
    );
  }
  return new McpAuthError('token_request_failed', (e.message ?? 'the OAuth request failed').slice(0, 300));
}
