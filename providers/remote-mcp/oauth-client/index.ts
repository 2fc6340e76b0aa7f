/**
 * OAuth for remote MCP servers as the MCP authorization spec (2025-11-25) says: discovery,
 * client registration, PKCE + resource authorization, code exchange, refresh, step-up. Protocol
 * only: storage comes in through `ClientRegistrationStore` (platform/database/mcp-client-registrations.ts).
 */

export type { EgressOptions, GuardedFetch } from '../../sdk/guarded-fetch.js';
export type {
  ClientIdentity,
  ClientRegistrationStore,
  PreRegisteredClient,
  StoredRegistration,
  TokenEndpointAuthMethod,
} from './client-identity.js';
export { type ClientMetadataDocument, clientMetadataDocument, isUsableClientIdUrl } from './client-metadata-document.js';
export {
  type DiscoveredAuthorization,
  type DiscoveryOptions,
  discoverAuthorization,
  fetchAuthorizationServerMetadata,
} from './discovery.js';
export { mcpAuthFetch } from './egress.js';
export { type EnsureClientOptions, ensureClient } from './ensure-client.js';
export type { AuthorizationServerMetadata, ProtectedResourceMetadata } from './metadata.js';
export { McpAuthError, type McpAuthErrorCode } from './oauth-errors.js';
export { type StepUp, stepUpScopes } from './step-up.js';
export { type AuthorizationRequest, authorizationRequest, exchangeCode, refresh, revoke, type TokenSet } from './tokens.js';
export { bearerChallenge } from './www-authenticate.js';
