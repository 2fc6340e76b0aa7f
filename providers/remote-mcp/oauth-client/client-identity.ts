import type { TokenEndpointAuthMethod } from '../../../core/ports/mcp-client-registrations.js';

export type { ClientRegistrationStore, StoredRegistration, TokenEndpointAuthMethod } from '../../../core/ports/mcp-client-registrations.js';

/** The client Switchboard is at one authorization server. `clientSecret` is a secret: never log it. */
export interface ClientIdentity {
  issuer: string;
  clientId: string;
  clientSecret?: string;
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
  /** How it came to be, in the spec's order of preference. */
  kind: 'pre-registered' | 'metadata-document' | 'dynamic';
}

/** A client the operator registered by hand at the authorization server. */
export interface PreRegisteredClient {
  clientId: string;
  clientSecret?: string;
  /**
   * The authorization server the client belongs to. When set, any other issuer is refused, so a
   * server whose metadata changes cannot have Switchboard send this client's secret elsewhere.
   */
  issuer?: string;
  tokenEndpointAuthMethod?: TokenEndpointAuthMethod;
}
