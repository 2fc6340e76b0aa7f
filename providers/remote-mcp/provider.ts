import type { AllowedHost } from '../../core/network-policy.js';
import type { ListedTool, UpstreamCatalogStore } from '../../core/ports/upstream-tool-catalogs.js';
import type { UpstreamEntry } from '../../core/upstream-entry.js';
import { guardedFetch } from '../sdk/guarded-fetch.js';
import type { Credential, DynamicTools, Provider, ToolDefinition, ToolLogger } from '../sdk/index.js';
import { upstreamEgressErrors } from './egress-errors.js';
import { cappingListings } from './listing-cap.js';
import { type UpstreamOAuthOptions, upstreamOAuthFlow } from './oauth-flow.js';
import { refusingRedirects } from './refuse-redirects.js';
import type { CallToolAnswer } from './result.js';
import { credentialKey, UpstreamSessions } from './sessions.js';
import { convertTools, UPSTREAM_LIMITS } from './tools.js';

interface UpstreamOptions {
  /** UPSTREAM_MCP_ALLOWED_HOSTS: hosts reachable even at loopback/private addresses. */
  allowedHosts: readonly AllowedHost[];
  /** CONNECTIONS_PROVIDER_RESPONSE_MAX_BYTES: every upstream response body is cut here. */
  maxResponseBytes: number;
  /** UPSTREAM_MCP_TOOLS_TTL_SEC: a tool list is listed again after this. */
  toolsTtlSec: number;
  /** UPSTREAM_MCP_SESSION_IDLE_SEC: an upstream session unused this long is closed (default 300). */
  sessionIdleSec?: number;
  /** Switchboard's version, sent as the MCP client's. */
  version: string;
  logger?: ToolLogger;
  /**
   * Where dynamic registrations live and Switchboard's client URLs: `auth: oauth2` entries connect
   * only with it (without, as when a configuration is only checked, they are listed but not configured).
   */
  oauth?: UpstreamOAuthOptions;
  /** Where the last listing is shared between processes and restarts (platform/database/upstream-tool-catalogs.ts). */
  catalog?: UpstreamCatalogStore;
  /**
   * Whose server this is: `operator` (the default) or `tenant:<id>`. Its saved tool catalog and its
   * OAuth client registrations are that scope's own, never shared across it.
   */
  catalogScope?: string;
}

/** A saved listing larger than this (JSON) is not shared through the database; the process keeps it. */
const MAX_SAVED_CATALOG_BYTES = 2 * 1024 * 1024;

/** The bounded time a search waits for a first listing of a server nobody listed yet. */
const FIRST_LISTING_WAIT_MS = 5000;
/** A server that says its tools changed is listed again at most this often (per credential). */
const RELIST_MIN_INTERVAL_MS = 5000;
/** After a failed listing, searches do not wait on this server again for this long. */
const FAILED_LISTING_BACKOFF_MS = 30_000;

/**
 * The tools of one upstream server: listed per credential (`shared` for `auth: none`) with a TTL,
 * forgotten on `notifications/tools/list_changed`. The most recent listing is the shared catalog
 * search shows to everyone, connected or not.
 */
class UpstreamToolLists implements DynamicTools {
  private readonly lists = new Map<string, { tools: ToolDefinition[]; at: number; changed?: boolean }>();
  private readonly pending = new Map<string, Promise<ToolDefinition[]>>();
  private latest: ToolDefinition[] = [];
  private failedAt = Number.NEGATIVE_INFINITY;
  /** The latest shared listing failed, and none has worked since. */
  private listingFailed = false;
  private changes = 0;
  private loadedSaved = false;
  readonly sessions: UpstreamSessions;

  constructor(
    private readonly entry: UpstreamEntry,
    private readonly options: UpstreamOptions,
  ) {
    const fetch = cappingListings(
      refusingRedirects(
        guardedFetch({
          allowedHosts: options.allowedHosts,
          maxResponseBytes: options.maxResponseBytes,
          // An MCP session's answers can be long-lived SSE streams: the SDK's own signals bound them.
          timeoutMs: null,
          errors: upstreamEgressErrors,
        }),
      ),
      UPSTREAM_LIMITS.listingPageBytes,
    );
    this.sessions = new UpstreamSessions(entry, fetch, options.version, (key) => this.markChanged(key), {
      idleMs: options.sessionIdleSec === undefined ? undefined : options.sessionIdleSec * 1000,
    });
  }

  shared(): ToolDefinition[] {
    return this.latest;
  }

  version(): number {
    return this.changes;
  }

  unavailable(): boolean {
    return this.listingFailed;
  }

  close(): Promise<void> {
    return this.sessions.closeAll();
  }

  /**
   * The server said its tools changed: the next search lists them again, but not sooner than
   * RELIST_MIN_INTERVAL_MS after the last listing (a server announcing changes without end would
   * otherwise have every tenant's event loop parse its listing again and again).
   */
  private markChanged(key: string): void {
    const cached = this.lists.get(key);
    if (cached) cached.changed = true;
  }

  async list(credential: Credential, signal: AbortSignal): Promise<ToolDefinition[]> {
    const key = credentialKey(credential);
    const cached = this.lists.get(key);
    const age = cached ? Date.now() - cached.at : Number.POSITIVE_INFINITY;
    if (cached && (cached.changed ? age < RELIST_MIN_INTERVAL_MS : age < this.options.toolsTtlSec * 1000)) return cached.tools;
    let pending = this.pending.get(key);
    if (!pending) {
      pending = this.fetchList(credential, signal).finally(() => this.pending.delete(key));
      this.pending.set(key, pending);
    }
    return pending;
  }

  async warm(): Promise<void> {
    await this.loadSaved();
    if (this.entry.auth.type !== 'none') return;
    const cached = this.lists.get('shared');
    if (cached && Date.now() - cached.at < this.options.toolsTtlSec * 1000) return;
    // A server that is down does not slow every search: one try per back-off period.
    if (Date.now() - this.failedAt < FAILED_LISTING_BACKOFF_MS) return;
    const listing = this.list({ type: 'none' }, AbortSignal.timeout(30_000)).catch((err: Error) => {
      this.failedAt = Date.now();
      this.listingFailed = true;
      this.options.logger?.warn(
        { integration: this.entry.name, err: err.message.slice(0, 200) },
        'could not list an upstream server’s tools',
      );
    });
    // Stale data is answered at once and refreshed behind; only a first listing is waited for (bounded).
    if (!cached) await Promise.race([listing, new Promise((r) => setTimeout(r, FIRST_LISTING_WAIT_MS).unref())]);
  }

  private catalogKey(): string {
    return `${this.options.catalogScope ?? 'operator'}:${this.entry.name}:${this.entry.url}`;
  }

  /**
   * The listing another process (or this one before a restart) saved, else the operator's
   * snapshot in the entry, until this process lists the server itself: so a user who has not
   * connected a server that needs a credential still finds its tools, and the hint to connect.
   * Read once; a failure only leaves the catalog empty.
   */
  private async loadSaved(): Promise<void> {
    if (this.loadedSaved) return;
    this.loadedSaved = true;
    try {
      const saved = await this.options.catalog?.load(this.catalogKey());
      const tools = (saved?.tools ?? this.entry.toolsSnapshot) as ListedTool[] | undefined;
      if (!tools?.length || this.latest.length) return;
      this.latest = this.convert(tools).tools;
      this.changes++;
    } catch (err) {
      this.options.logger?.warn(
        { integration: this.entry.name, err: (err as Error).message.slice(0, 200) },
        'could not read the saved tool catalog',
      );
    }
  }

  private async fetchList(credential: Credential, signal: AbortSignal): Promise<ToolDefinition[]> {
    const listed: ListedTool[] = [];
    await this.sessions.run(credential, signal, async (client) => {
      listed.length = 0;
      let cursor: string | undefined;
      let bytes = 0;
      for (let page = 0; page < UPSTREAM_LIMITS.pages; page++) {
        const answer = await client.listTools(cursor ? { cursor } : undefined, UpstreamSessions.options(signal));
        listed.push(...(answer.tools as ListedTool[]));
        cursor = answer.nextCursor;
        // Pages past what one listing may carry are not asked for: each costs the SDK a parse.
        bytes += JSON.stringify(answer.tools ?? []).length;
        if (!cursor || listed.length > UPSTREAM_LIMITS.tools * 2) break;
        if (bytes >= UPSTREAM_LIMITS.listingSchemaBytes) {
          this.options.logger?.warn(
            { integration: this.entry.name, pages: page + 1, bytes },
            'upstream tool listing stopped at its byte bound; later pages left out',
          );
          break;
        }
      }
    });
    const { tools, dropped, kept } = this.convert(listed);
    if (dropped.length)
      this.options.logger?.warn({ integration: this.entry.name, dropped: dropped.slice(0, 20) }, 'upstream tools left out');
    this.lists.set(credentialKey(credential), { tools, at: Date.now() });
    if (credential.type === 'none') this.listingFailed = false;
    this.latest = tools;
    this.loadedSaved = true;
    this.changes++;
    if (this.options.catalog && Buffer.byteLength(JSON.stringify(kept)) <= MAX_SAVED_CATALOG_BYTES) {
      this.options.catalog
        .save(this.catalogKey(), kept)
        .catch((err: Error) =>
          this.options.logger?.warn({ integration: this.entry.name, err: err.message.slice(0, 200) }, 'could not save the tool catalog'),
        );
    }
    return tools;
  }

  /** Listed (or saved) tools as this server's tools; its argument checks are one lane of the checker. */
  private convert(listed: readonly ListedTool[]) {
    return convertTools(this.entry, listed, (name, args, ctx) => this.call(name, args, ctx.credential, ctx.signal), {
      lane: this.catalogKey(),
    });
  }

  private call(name: string, args: unknown, credential: Credential, signal: AbortSignal): Promise<CallToolAnswer> {
    return this.sessions.run(credential, signal, (client) =>
      client.callTool({ name, arguments: (args ?? {}) as Record<string, unknown> }, undefined, UpstreamSessions.options(signal)),
    ) as Promise<CallToolAnswer>;
  }
}

/** `deepwiki` → `deepwiki`, `microsoft-learn` → `microsoft_learn`: the flat tool-name prefix. */
const toolPrefixOf = (name: string): string => name.replace(/-/g, '_');

/** One upstream MCP server as a provider whose tools are listed from the server. */
export function upstreamProvider(entry: UpstreamEntry, options: UpstreamOptions): Provider {
  const auth = entry.auth;
  const lists = new UpstreamToolLists(entry, options);
  const oauthFlow =
    auth.type === 'oauth2' && options.oauth
      ? upstreamOAuthFlow(
          { ...entry, auth },
          { ...options.oauth, allowedHosts: options.allowedHosts, scope: options.catalogScope ?? 'operator' },
        )
      : undefined;
  return {
    manifest: {
      name: entry.name,
      version: '1.0.0',
      displayName: entry.displayName,
      description: entry.description ?? `Remote MCP server at ${new URL(entry.url).host}`,
      auth: auth.type,
      envPrefix: `UPSTREAM_${toolPrefixOf(entry.name).toUpperCase()}`,
      toolPrefix: toolPrefixOf(entry.name),
      apiBaseUrl: entry.url,
      ...(auth.type === 'apikey' && {
        apiKeyFields: [{ name: 'apiKey', label: auth.label, secret: true, ...(auth.placeholder && { placeholder: auth.placeholder }) }],
      }),
    },
    tools: [],
    dynamicTools: lists,
    ...(oauthFlow && { oauthFlow }),
    ...(auth.type !== 'none' && { credentialBinding: `mcp:${entry.url}` }),
    // One account per user and server (a reconnect replaces its credential in place). An API key's
    // test call is listing the tools with it (a refused key is a 401), which also fills the catalog;
    // a fresh OAuth token lists them too, but a listing that fails does not undo the consent.
    ...(auth.type !== 'none' && {
      async identify(ctx) {
        const listing = lists.list(ctx.credential, ctx.signal);
        if (auth.type === 'apikey') await listing;
        else
          await listing.catch((err: Error) =>
            options.logger?.warn({ integration: entry.name, err: err.message.slice(0, 200) }, 'could not list the tools after connecting'),
          );
        return { externalId: `mcp:${entry.name}`, label: entry.displayName };
      },
    }),
  };
}
