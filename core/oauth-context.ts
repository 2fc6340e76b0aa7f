/**
 * What one authorization was asked with, where the service's OAuth is discovered rather than
 * configured (upstream MCP servers): kept with the attempt until its callback and with the
 * credential for its refreshes, so the code is exchanged and the token refreshed at the same
 * authorization server, by the same client, for the same RFC 8707 resource. Public values only.
 */
export interface OAuthContext {
  issuer: string;
  resource: string;
  clientId: string;
  scopes?: string[];
  /**
   * The redirect URI the consent was asked with: its callback must arrive there (absent in
   * contexts recorded before redirect URIs were per issuer: the shared callback).
   */
  redirectUri?: string;
}
