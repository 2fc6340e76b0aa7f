import type { OAuthContext } from '../../core/oauth-context.js';
import type { TokenSet } from './oauth-client.js';

/** Whether a callback arrived at `redirectUri` (its origin and path; the query is the response). */
export function arrivedAt(callbackUrl: URL, redirectUri: string): boolean {
  const expected = new URL(redirectUri);
  return callbackUrl.origin === expected.origin && callbackUrl.pathname === expected.pathname;
}

export interface ConsentRequest {
  url: URL;
  state: string;
  /** Secret until the code is exchanged: sealed at rest with the attempt. */
  codeVerifier: string;
  context?: OAuthContext;
}

/**
 * The OAuth client side of one integration: consent URL, code exchange, refresh, revocation.
 * Configured services (GitHub, Slack, Jira) use fixed endpoints and the operator's client
 * (`staticOAuthFlow`); an upstream MCP server discovers its authorization server and registers
 * Switchboard there (providers/remote-mcp/oauth-flow.ts). Failures are `OAuthFlowError`s with
 * the authorization server's error code (`invalid_grant`, …) and a message holding no secret.
 */
export interface OAuthFlow {
  /** A new consent request with a fresh state and PKCE S256; `scopes` are asked for on top of the usual ones. */
  begin(input: { redirectUri: string; scopes?: string[] }): Promise<ConsentRequest>;
  /** Exchanges the code; `callbackUrl` is the configured callback with the query the browser brought. */
  finish(callbackUrl: URL, checks: { codeVerifier: string; expectedState: string; context?: OAuthContext }): Promise<TokenSet>;
  refresh(refreshToken: string, context?: OAuthContext): Promise<TokenSet>;
  /** RFC 7009 revocation; false where the service has no endpoint for it. */
  revoke(token: string, context?: OAuthContext): Promise<boolean>;
  /**
   * The origin of the consent page (the portal's form-action must allow it before its Connect
   * button is pressed); undefined when it cannot be learned now.
   */
  consentOrigin(): Promise<string | undefined>;
}
