import * as oidc from 'openid-client';
import type { ResolvedOAuth2 } from '../registry.js';
import type { OAuthFlow } from './oauth-flow.js';
import { capResponse, DEFAULT_RESPONSE_MAX_BYTES } from './response-cap.js';

/**
 * Every OAuth2 client flow goes through openid-client: consent URLs with state and PKCE S256,
 * code exchange, refresh and revocation. Plain OAuth2 services (GitHub, Slack) have no discovery
 * document, so the configuration is built from the provider's endpoints.
 */

export class OAuthFlowError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'OAuthFlowError';
  }
}

const configurations = new WeakMap<ResolvedOAuth2, oidc.Configuration>();

function oauthConfiguration(endpoints: ResolvedOAuth2): oidc.Configuration {
  let config = configurations.get(endpoints);
  if (config) return config;
  const authorize = new URL(endpoints.authorizeUrl);
  config = new oidc.Configuration(
    {
      // An `iss` in the callback must equal this exactly; services that send one serve it from
      // the origin of their authorize endpoint.
      issuer: authorize.origin,
      authorization_endpoint: endpoints.authorizeUrl,
      token_endpoint: endpoints.tokenUrl,
      ...(endpoints.revokeUrl && { revocation_endpoint: endpoints.revokeUrl }),
    },
    endpoints.clientId,
    undefined,
    endpoints.clientAuth === 'client_secret_basic'
      ? oidc.ClientSecretBasic(endpoints.clientSecret)
      : oidc.ClientSecretPost(endpoints.clientSecret),
  );
  if (authorize.protocol === 'http:' || new URL(endpoints.tokenUrl).protocol === 'http:') oidc.allowInsecureRequests(config);
  // Token and revocation answers are read with the same cap as tool responses (finding 16).
  config[oidc.customFetch] = async (url, options) => capResponse(await fetch(url, options as RequestInit), DEFAULT_RESPONSE_MAX_BYTES);
  configurations.set(endpoints, config);
  return config;
}

interface AuthorizationRequest {
  url: URL;
  state: string;
  codeVerifier: string;
}

async function buildConsentUrl(endpoints: ResolvedOAuth2, redirectUri: string): Promise<AuthorizationRequest> {
  const codeVerifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(oauthConfiguration(endpoints), {
    redirect_uri: redirectUri,
    scope: endpoints.scopes.join(endpoints.scopeSeparator),
    state,
    code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
    ...endpoints.authorizeParams,
  });
  return { url, state, codeVerifier };
}

export interface TokenSet {
  accessToken: string;
  refreshToken?: string;
  tokenType?: string;
  expiresAt?: Date;
  scopes?: string[];
  idTokenSubject?: string;
}

function toTokenSet(response: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers, requested: string[]): TokenSet {
  // Services that send an `error` with HTTP 200 (GitHub) never reach here without a token.
  if (!response.access_token) throw new OAuthFlowError('invalid_token_response', 'the token response had no access_token');
  const expiresIn = response.expiresIn();
  const claims = response.id_token ? response.claims() : undefined;
  return {
    accessToken: response.access_token,
    refreshToken: response.refresh_token,
    tokenType: response.token_type,
    expiresAt: expiresIn !== undefined ? new Date(Date.now() + expiresIn * 1000) : undefined,
    scopes: typeof response.scope === 'string' ? response.scope.split(/[ ,]+/).filter(Boolean) : requested,
    idTokenSubject: claims?.sub,
  };
}

/** Maps openid-client's failures to an OAuthFlowError whose message holds no secret. */
function describeFailure(err: unknown): OAuthFlowError {
  if (err instanceof OAuthFlowError) return err;
  if (err instanceof oidc.ResponseBodyError) {
    return new OAuthFlowError(
      err.error,
      `the authorization server answered ${err.error}${err.error_description ? `: ${err.error_description}` : ''}`,
      err.status,
    );
  }
  if (err instanceof oidc.AuthorizationResponseError) {
    return new OAuthFlowError(
      err.error,
      `the authorization was refused: ${err.error}${err.error_description ? ` (${err.error_description})` : ''}`,
    );
  }
  const e = err as { code?: string; message?: string; cause?: unknown };
  return new OAuthFlowError(e.code ?? 'oauth_error', e.message ?? 'OAuth request failed');
}

/**
 * Exchanges the authorization code. `callbackUrl` must be built from the configured public
 * base URL (never the request's Host header).
 */
async function exchangeCode(
  endpoints: ResolvedOAuth2,
  callbackUrl: URL,
  checks: { codeVerifier: string; expectedState: string },
): Promise<TokenSet> {
  try {
    const response = await oidc.authorizationCodeGrant(oauthConfiguration(endpoints), callbackUrl, {
      pkceCodeVerifier: checks.codeVerifier,
      expectedState: checks.expectedState,
      idTokenExpected: false,
    });
    return toTokenSet(response, endpoints.scopes);
  } catch (err) {
    throw describeFailure(err);
  }
}

async function refreshTokens(endpoints: ResolvedOAuth2, refreshToken: string): Promise<TokenSet> {
  try {
    return toTokenSet(await oidc.refreshTokenGrant(oauthConfiguration(endpoints), refreshToken), endpoints.scopes);
  } catch (err) {
    throw describeFailure(err);
  }
}

/** RFC 7009 revocation; a service without the endpoint is skipped. */
async function revokeToken(endpoints: ResolvedOAuth2, token: string): Promise<boolean> {
  if (!endpoints.revokeUrl) return false;
  try {
    await oidc.tokenRevocation(oauthConfiguration(endpoints), token);
    return true;
  } catch (err) {
    throw describeFailure(err);
  }
}

/** A configured service's OAuth (fixed endpoints, the operator's client) as an OAuthFlow. */
export function staticOAuthFlow(endpoints: ResolvedOAuth2): OAuthFlow {
  return {
    begin: ({ redirectUri, scopes }) =>
      buildConsentUrl(scopes?.length ? { ...endpoints, scopes: [...new Set([...endpoints.scopes, ...scopes])] } : endpoints, redirectUri),
    finish: (callbackUrl, checks) => exchangeCode(endpoints, callbackUrl, checks),
    refresh: (refreshToken) => refreshTokens(endpoints, refreshToken),
    revoke: (token) => revokeToken(endpoints, token),
    consentOrigin: async () => (URL.canParse(endpoints.authorizeUrl) ? new URL(endpoints.authorizeUrl).origin : undefined),
  };
}
