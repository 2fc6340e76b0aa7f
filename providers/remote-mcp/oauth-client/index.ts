/**
 * OAuth for remote MCP servers as the MCP authorization spec (2025-11-25) says: discovery,
 * client registration, PKCE + resource authorization, code exchange, refresh, step-up. Protocol
 * only: storage comes in through `ClientRegistrationStore` (platform/database/mcp-client-registrations.ts).
 */

export type { EgressOptions } from '../../sdk/guarded-fetch.js';
export type { ClientIdentity, ClientRegistrationStore, StoredRegistration } from './client-identity.js';
export { type DiscoveredAuthorization, discoverAuthorization, fetchAuthorizationServerMetadata } from './discovery.js';
export { mcpAuthFetch } from './egress.js';
export { ensureClient } from './ensure-client.js';
export type { AuthorizationServerMetadata } from './metadata.js';
export { McpAuthError } from './oauth-errors.js';
export { stepUpScopes } from './step-up.js';
export { authorizationRequest, exchangeCode, refresh, revoke, type TokenSet } from './tokens.js';
