import type { TenantOpenApiEntry } from '../tenant-openapi-entry.js';
import type { UpstreamEntry } from '../upstream-entry.js';

/**
 * How a tenant's own upstream MCP servers and OpenAPI integrations reach the provider registry
 * (providers/tenant-views.ts). Providers cannot read the store, so the rows come through `load`
 * (platform/database/tenant-upstream-servers.ts implements it), and each is built by the
 * deployment's one upstream factory (`build`, building a `Built`: a provider), the same that builds
 * the operator's servers.
 */
export interface TenantServerSource<Built, Document = unknown> {
  /**
   * The tenant's stored entries (secrets opened), unvalidated: a row a newer schema refuses is left
   * out, not fatal; so is one that says why it cannot be used (`unusable`, e.g. a secret no key opens).
   */
  load(tenantId: string): Promise<readonly { name: string; entry: unknown; unusable?: string }[]>;
  /** The deployment's upstream factory; `tenantId` keeps the server's shared tool catalog the tenant's own. */
  build(entry: UpstreamEntry, tenantId: string): Built;
  /** Told when an entry is left out: it no longer validates, or an operator integration took its name since. */
  onSkipped?(tenantId: string, name: string, reason: string): void;
  /** Tenants' OpenAPI integrations; without it, such an entry is refused (add) or left out (load). */
  openapi?: TenantOpenApiSource<Built, Document>;
}

export interface TenantOpenApiSource<Built, Document> {
  /** Fetches a document by its URL through the guarded egress (bounded in bytes and time) and parses it. */
  fetch(url: string): Promise<{ text: string; document: Document }>;
  /** Parses stored document text (throws with the place of a problem). */
  parse(text: string): Document;
  /** The stored text of the tenant's document with this sha256, or undefined. */
  text(tenantId: string, sha256: string): Promise<string | undefined>;
  /** The provider of an entry and its parsed document; its calls go through the guarded egress. */
  build(entry: TenantOpenApiEntry, document: Document, tenantId: string): Built;
}
