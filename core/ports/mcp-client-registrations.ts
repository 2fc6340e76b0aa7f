/**
 * What the OAuth client (providers/remote-mcp/oauth-client) needs from storage: its dynamic client registrations,
 * one per issuer. platform/database/mcp-client-registrations.ts implements it.
 */

/** How Switchboard authenticates at an authorization server's token endpoint. */
export type TokenEndpointAuthMethod = 'none' | 'client_secret_basic' | 'client_secret_post';

/** An RFC 7591 registration as stored per issuer (platform/database/mcp-client-registrations.ts). */
export interface StoredRegistration {
  issuer: string;
  clientId: string;
  clientSecret?: string;
  /** RFC 7591 `client_secret_expires_at` in seconds; 0 or absent: it does not expire. */
  clientSecretExpiresAt?: number;
  registrationAccessToken?: string;
  registrationClientUri?: string;
  redirectUris: string[];
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
}

/**
 * Where dynamic registrations live: one per issuer, shared by every process. `save` keeps the
 * first registration stored for an issuer (two processes registering at once both get the same
 * one back); `replace` swaps `previousClientId`'s registration for a new one, or returns whatever
 * another process already put in its place.
 */
export interface ClientRegistrationStore {
  find(issuer: string): Promise<StoredRegistration | undefined>;
  save(registration: StoredRegistration): Promise<StoredRegistration>;
  replace(previousClientId: string, registration: StoredRegistration): Promise<StoredRegistration>;
}
