/**
 * Why an upstream MCP server's OAuth could not go on. Codes are stable (callers branch on them);
 * messages name URLs and fields but never a secret (no token, code, verifier or client secret).
 */
type McpAuthErrorCode =
  /** The network policy refused a URL (private address, plain http off the allow-list, userinfo). */
  | 'egress_refused'
  /** A document could not be fetched (network error, 5xx, no well-known location answered). */
  | 'metadata_unavailable'
  /** A document was fetched but is not what the specs require. */
  | 'metadata_invalid'
  /** The server answered without asking for authorization and publishes no protected resource metadata. */
  | 'not_protected'
  /** The protected resource metadata names another resource than the server, or lives on another origin. */
  | 'resource_mismatch'
  /** The authorization server metadata names another issuer than the one it was fetched for (RFC 8414 §3.3). */
  | 'issuer_mismatch'
  /** The authorization server does not advertise PKCE S256: the MCP spec says to refuse. */
  | 'pkce_unsupported'
  /** No registration route: no pre-registered client, no CIMD support, no registration endpoint. */
  | 'registration_unavailable'
  | 'registration_failed'
  /** The authorization server does not know the client (any more): register again. */
  | 'invalid_client'
  /** The callback's `iss` or `state` is not the one this flow expects (RFC 9207, CSRF). */
  | 'callback_mismatch'
  /** The authorization server refused a grant (`invalid_grant` and friends keep their own code). */
  | 'token_request_failed'
  | 'response_too_large';

export class McpAuthError extends Error {
  constructor(
    readonly code: McpAuthErrorCode | string,
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'McpAuthError';
  }
}
