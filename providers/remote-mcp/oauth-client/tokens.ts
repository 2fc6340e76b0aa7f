import * as oidc from 'openid-client';
import type { EgressOptions, GuardedFetch } from '../../sdk/guarded-fetch.js';
import type { TokenSet } from '../../sdk/oauth-client.js';
import type { ClientIdentity } from './client-identity.js';
import type { AuthorizationServerMetadata } from './metadata.js';
import { describeOAuthFailure, oauthConfiguration } from './oauth-configuration.js';

export type { TokenSet };

type Egress = EgressOptions & { fetch?: GuardedFetch };

interface AuthorizationRequest {
  /** Where the human's browser goes: the authorization endpoint with PKCE, state, scope and resource. */
  url: URL;
  state: string;
  /** Secret until the code is exchanged: seal it at rest (connection_attempts does). */
  codeVerifier: string;
}

/**
 * The authorization request: PKCE S256, a fresh state, the RFC 8707 `resource` (the canonical
 * server URI from discovery), and the scopes (the challenge's, else `scopes_supported`; omitted
 * when there are none).
 */
export async function authorizationRequest(
  as: AuthorizationServerMetadata,
  client: ClientIdentity,
  input: { redirectUri: string; resource: string; scopes?: string[] },
): Promise<AuthorizationRequest> {
  const config = oauthConfiguration(as, client);
  const codeVerifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: input.redirectUri,
    state,
    code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
    resource: input.resource,
    ...(input.scopes?.length && { scope: input.scopes.join(' ') }),
  });
  return { url, state, codeVerifier };
}

/**
 * Exchanges the code at the token endpoint with the verifier and `resource`. `callbackUrl` is the
 * configured public callback URL with the query the browser brought: openid-client checks `state`
 * and the RFC 9207 `iss` (equal to the issuer whenever present; required where the server says it
 * sends one), so a code from another authorization server (a mix-up) is never exchanged here.
 */
export async function exchangeCode(
  as: AuthorizationServerMetadata,
  client: ClientIdentity,
  callbackUrl: URL,
  checks: { codeVerifier: string; expectedState: string; resource: string; scopes?: string[] },
  options: Egress = {},
): Promise<TokenSet> {
  try {
    const response = await oidc.authorizationCodeGrant(
      oauthConfiguration(as, client, options),
      callbackUrl,
      { pkceCodeVerifier: checks.codeVerifier, expectedState: checks.expectedState, idTokenExpected: false },
      { resource: checks.resource },
    );
    return toTokenSet(response, checks.scopes ?? []);
  } catch (err) {
    throw describeOAuthFailure(err);
  }
}

/** A refresh grant with `resource`, so the new access token is bound to the same server. */
export async function refresh(
  as: AuthorizationServerMetadata,
  client: ClientIdentity,
  refreshToken: string,
  input: { resource: string; scopes?: string[] },
  options: Egress = {},
): Promise<TokenSet> {
  try {
    const response = await oidc.refreshTokenGrant(oauthConfiguration(as, client, options), refreshToken, { resource: input.resource });
    return toTokenSet(response, input.scopes ?? []);
  } catch (err) {
    throw describeOAuthFailure(err);
  }
}

/** RFC 7009 revocation where the server has the endpoint; false where it has none. */
export async function revoke(
  as: AuthorizationServerMetadata,
  client: ClientIdentity,
  token: string,
  options: Egress = {},
): Promise<boolean> {
  if (!as.revocation_endpoint) return false;
  try {
    await oidc.tokenRevocation(oauthConfiguration(as, client, options), token);
    return true;
  } catch (err) {
    throw describeOAuthFailure(err);
  }
}

function toTokenSet(response: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers, requested: string[]): TokenSet {
  const expiresIn = response.expiresIn();
  return {
    accessToken: response.access_token,
    refreshToken: response.refresh_token,
    tokenType: response.token_type,
    expiresAt: expiresIn !== undefined ? new Date(Date.now() + expiresIn * 1000) : undefined,
    scopes: typeof response.scope === 'string' ? response.scope.split(' ').filter(Boolean) : requested,
  };
}
