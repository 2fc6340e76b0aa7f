import type { TenantServerSource } from '../core/ports/tenant-upstream-servers.js';
import { isOpenApiItem, type TenantOpenApiEntry, tenantOpenApiEntrySchema } from '../core/tenant-openapi-entry.js';
import { type UpstreamEntry, upstreamEntrySchema } from '../core/upstream-entry.js';
import type { OpenApiDocument } from './openapi/document.js';
import type { Provider } from './sdk/index.js';

/** A tenant's own servers as the registry reads them: each built into a provider. */
export type TenantServers = TenantServerSource<Provider, OpenApiDocument>;

/** A tenant's entry of either kind: an upstream MCP server or an OpenAPI integration. */
export type TenantEntry = UpstreamEntry | TenantOpenApiEntry;

const isOpenApiEntry = (entry: TenantEntry): entry is TenantOpenApiEntry => 'kind' in entry && entry.kind === 'openapi';

/** Parsed tenants' documents kept in memory, by sha256 (a document can be megabytes: read and parsed once). */
export const TENANT_DOCUMENTS_CACHED = 16;

/**
 * How long a tenant's view is answered without reading its rows again. Another process's change
 * (the admin CLI, another server) shows within this; this process's own portal changes at once.
 */
const TENANT_VIEW_TTL_MS = 5000;

/** A tenant nobody asked for in this long has its servers' sessions closed and its view dropped (built again on use). */
const TENANT_VIEW_IDLE_MS = 10 * 60_000;

interface Built {
  fingerprint: string;
  provider: Provider;
}

interface CachedView<V> {
  checkedAt: number;
  /** The tenant's entries as one string: the view object is kept while it is unchanged (its search index too). */
  key: string;
  view: V | undefined;
}

/**
 * Per-tenant views of a registry, rebuilt at most every TENANT_VIEW_TTL_MS. A tenant provider
 * object (its upstream sessions and tool lists) lives on across rebuilds while its entry is
 * unchanged, and is closed when its entry changes or goes.
 */
export class TenantViews<V> {
  private readonly cache = new Map<string, CachedView<V>>();
  private readonly loading = new Map<string, Promise<V | undefined>>();
  private readonly built = new Map<string, Map<string, Built>>();
  /** Bumped by forget(): a read that started before a change must not cache what it read. */
  private readonly generations = new Map<string, number>();
  private readonly documents = new Map<string, OpenApiDocument>();

  constructor(
    readonly servers: TenantServers,
    /** The base integration a name (or its tool prefix) would shadow, if any. */
    private readonly takenBy: (name: string) => string | undefined,
    private readonly makeView: (tenantId: string, providers: Provider[]) => V,
    private readonly ttlMs = TENANT_VIEW_TTL_MS,
    private readonly idleMs = TENANT_VIEW_IDLE_MS,
  ) {}

  /** The tenant's view, or undefined when it has no servers of its own (the base answers). */
  get(tenantId: string): Promise<V | undefined> {
    const cached = this.cache.get(tenantId);
    if (cached && Date.now() - cached.checkedAt < this.ttlMs) return Promise.resolve(cached.view);
    let pending = this.loading.get(tenantId);
    if (!pending) {
      const loading: Promise<V | undefined> = this.reload(tenantId).finally(() => {
        if (this.loading.get(tenantId) === loading) this.loading.delete(tenantId);
      });
      pending = loading;
      this.loading.set(tenantId, pending);
    }
    return pending;
  }

  /** Drops the cached view (this process just changed the tenant's servers). */
  forget(tenantId: string): void {
    this.cache.delete(tenantId);
    this.loading.delete(tenantId);
    this.generations.set(tenantId, (this.generations.get(tenantId) ?? 0) + 1);
  }

  /**
   * Closes the servers of tenants nobody asked for in TENANT_VIEW_IDLE_MS (a view in use is read
   * again every TTL, which renews checkedAt), so a deployment of many tenants holds sessions only
   * for the active ones. Runs on reads, which every active tenant makes every few seconds.
   */
  private dropIdle(except: string): void {
    const now = Date.now();
    for (const [tenantId, cached] of this.cache) {
      if (tenantId === except || now - cached.checkedAt < this.idleMs || this.loading.has(tenantId)) continue;
      this.cache.delete(tenantId);
      for (const { provider } of this.built.get(tenantId)?.values() ?? []) void provider.dynamicTools?.close().catch(() => undefined);
      this.built.delete(tenantId);
    }
  }

  async close(): Promise<void> {
    const all = [...this.built.values()].flatMap((m) => [...m.values()]);
    this.built.clear();
    this.cache.clear();
    await Promise.all(all.map((b) => b.provider.dynamicTools?.close().catch(() => undefined)));
  }

  /** An entry's provider; an OpenAPI entry's document is read from the store only when no parsed copy is cached. */
  private async buildEntry(entry: TenantEntry, tenantId: string): Promise<Provider> {
    if (!isOpenApiEntry(entry)) return this.servers.build(entry, tenantId);
    const openapi = this.servers.openapi;
    if (!openapi) throw new Error('this deployment does not take OpenAPI integrations per tenant');
    const sha = entry.documentSha256;
    let document = this.documents.get(sha);
    if (document) this.documents.delete(sha);
    else {
      const text = await openapi.text(tenantId, sha);
      if (text === undefined) throw new Error('its stored document is missing');
      document = openapi.parse(text);
    }
    // Most recently used last: the first is the one dropped.
    this.documents.set(sha, document);
    if (this.documents.size > TENANT_DOCUMENTS_CACHED) this.documents.delete(this.documents.keys().next().value as string);
    return openapi.build(entry, document, tenantId);
  }

  private async reload(tenantId: string): Promise<V | undefined> {
    const generation = this.generations.get(tenantId) ?? 0;
    const rows = await this.servers.load(tenantId);
    // The tenant's servers changed while they were read: read them again rather than keep the old rows.
    if ((this.generations.get(tenantId) ?? 0) !== generation) return this.get(tenantId);
    this.dropIdle(tenantId);
    const entries: TenantEntry[] = [];
    for (const row of rows) {
      if (row.unusable) {
        this.servers.onSkipped?.(tenantId, row.name, row.unusable);
        continue;
      }
      const parsed = isOpenApiItem(row.entry) ? tenantOpenApiEntrySchema.safeParse(row.entry) : upstreamEntrySchema.safeParse(row.entry);
      const clash = parsed.success ? this.takenBy(parsed.data.name) : undefined;
      if (!parsed.success) this.servers.onSkipped?.(tenantId, row.name, 'its stored entry no longer validates');
      else if (clash) this.servers.onSkipped?.(tenantId, row.name, `the integration ${clash} of the deployment has this name`);
      else entries.push(parsed.data);
    }
    const key = entries.map((e) => JSON.stringify(e)).join('\n');
    const cached = this.cache.get(tenantId);
    if (cached && cached.key === key) {
      cached.checkedAt = Date.now();
      return cached.view;
    }
    const previous = this.built.get(tenantId) ?? new Map<string, Built>();
    const next = new Map<string, Built>();
    for (const entry of entries) {
      const fingerprint = JSON.stringify(entry);
      const kept = previous.get(entry.name);
      if (kept?.fingerprint === fingerprint) {
        next.set(entry.name, kept);
        continue;
      }
      try {
        next.set(entry.name, { fingerprint, provider: await this.buildEntry(entry, tenantId) });
      } catch (err) {
        this.servers.onSkipped?.(tenantId, entry.name, (err as Error).message);
      }
    }
    // Sessions of servers whose entry changed or went; a call still running on one fails like a dropped connection.
    for (const [name, old] of previous) {
      if (next.get(name) !== old) void old.provider.dynamicTools?.close().catch(() => undefined);
    }
    if (next.size) this.built.set(tenantId, next);
    else this.built.delete(tenantId);
    const view = next.size
      ? this.makeView(
          tenantId,
          [...next.values()].map((b) => b.provider),
        )
      : undefined;
    this.cache.set(tenantId, { checkedAt: Date.now(), key, view });
    return view;
  }
}
