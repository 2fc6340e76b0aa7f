import type { Config, ProviderEnv } from '../core/config.js';
import type { TenantOpenApiEntry } from '../core/tenant-openapi-entry.js';
import type { UpstreamEntry } from '../core/upstream-entry.js';
import { OpenApiError } from './openapi/document.js';
import { parseTenantOpenApi, withDocumentSha } from './openapi/tenant.js';
import { parseTenantUpstream } from './remote-mcp/config.js';
import type { Credential, Provider, ToolDefinition } from './sdk/index.js';
import { staticOAuthFlow } from './sdk/oauth-client.js';
import type { OAuthFlow } from './sdk/oauth-flow.js';
import { type TenantServers, TenantViews } from './tenant-views.js';

export interface ResolvedOAuth2 {
  authorizeUrl: string;
  tokenUrl: string;
  revokeUrl?: string;
  scopes: string[];
  scopeSeparator: string;
  authorizeParams: Record<string, string>;
  clientId: string;
  clientSecret: string;
  clientAuth: 'client_secret_post' | 'client_secret_basic';
  rotatesRefreshTokens: boolean;
}

export interface ToolEntry {
  provider: Provider;
  tool: ToolDefinition;
  /** `github_list_repos`: the nine-meta-tool surface. */
  flatName: string;
  /** `github__list_repos`: the agent-tools surface. */
  qualifiedName: string;
}

/** The providers of one deployment, with their env overrides applied. */
export class ProviderRegistry {
  private readonly byName = new Map<string, Provider>();
  private readonly toolsByFlat = new Map<string, ToolEntry>();
  private readonly toolsByQualified = new Map<string, ToolEntry>();
  private readonly staticFlows = new Map<string, OAuthFlow>();

  /** Set on the deployment's registry when tenants may add upstream servers of their own. */
  private tenantViews?: TenantViews<ProviderRegistry>;
  /** Set on a tenant's view: the registry it extends, and whose tenant it is. */
  private view?: { base: ProviderRegistry; tenantId: string };

  /** Entries of providers that list their tools at run time, rebuilt when their listing changes. */
  private dynamic = { version: -1, byFlat: new Map<string, ToolEntry>(), byQualified: new Map<string, ToolEntry>() };

  constructor(
    providers: readonly Provider[],
    private readonly env: Record<string, ProviderEnv> = {},
  ) {
    for (const provider of providers) {
      if (this.byName.has(provider.manifest.name)) throw new Error(`duplicate provider ${provider.manifest.name}`);
      this.byName.set(provider.manifest.name, provider);
      for (const tool of provider.tools) {
        const entry = entryOf(provider, tool);
        this.toolsByFlat.set(entry.flatName, entry);
        this.toolsByQualified.set(entry.qualifiedName, entry);
      }
    }
  }

  static fromConfig(providers: readonly Provider[], config: Pick<Config, 'providers'>): ProviderRegistry {
    return new ProviderRegistry(providers, config.providers);
  }

  /** Lets tenants' own upstream servers (platform/database/tenant-upstream-servers.ts) join their views. Once, on the base registry. */
  withTenantServers(servers: TenantServers, timing: { ttlMs?: number; idleMs?: number } = {}): this {
    if (this.view) throw new Error('a tenant view takes no tenant servers of its own');
    this.tenantViews = new TenantViews(
      servers,
      (name) => this.takenBy(name),
      (tenantId, providers) => {
        const view = new ProviderRegistry([...this.list(), ...providers], this.env);
        view.view = { base: this, tenantId };
        return view;
      },
      timing.ttlMs,
      timing.idleMs,
    );
    return this;
  }

  /**
   * What `tenantId`'s people see: the built-ins, the operator's upstream servers and the tenant's
   * own. The base registry itself when the tenant has none (its search index is shared then).
   * Views are cached briefly (TENANT_VIEW_TTL_MS); another tenant's servers are never in one.
   */
  async forTenant(tenantId: string): Promise<ProviderRegistry> {
    if (this.view) return this.view.tenantId === tenantId ? this : this.view.base.forTenant(tenantId);
    return (await this.tenantViews?.get(tenantId)) ?? this;
  }

  /**
   * A tenant administrator's server (a catalog name or a JSON entry) checked the way the operator's
   * are, plus: it may not take a deployment integration's name, and this build must be able to
   * build it. Throws an Error whose message says what is wrong.
   */
  tenantEntry(text: string): UpstreamEntry {
    const servers = this.tenantServers();
    const entry = parseTenantUpstream(text);
    this.refuseTaken(entry.name);
    // The factory refuses what this build cannot serve (e.g. an auth mode); nothing is sent anywhere.
    void servers.build(entry, 'validation').dynamicTools?.close();
    return entry;
  }

  /**
   * What a tenant administrator's text adds: an upstream MCP server (as tenantEntry checks it), or
   * an OpenAPI integration (`"kind": "openapi"`) with its document fetched now, once, through the
   * guarded egress, parsed and converted, so a bad document is refused here with the place of the
   * problem (`document: paths./x.get…: …`). Throws an Error whose message says what is wrong.
   */
  async tenantAddition(
    text: string,
  ): Promise<{ entry: UpstreamEntry; document?: undefined } | { entry: TenantOpenApiEntry; document: string }> {
    const input = parseTenantOpenApi(text);
    if (!input) return { entry: this.tenantEntry(text) };
    const openapi = this.tenantServers().openapi;
    if (!openapi) throw new Error('this deployment does not take OpenAPI integrations per tenant');
    this.refuseTaken(input.name);
    try {
      const fetched = await openapi.fetch(input.document);
      const entry = withDocumentSha(input, fetched.text);
      const provider = openapi.build(entry, fetched.document, 'validation');
      if (!provider.tools.length) throw new OpenApiError('paths', 'no operation becomes a tool (check include and exclude)');
      return { entry, document: fetched.text };
    } catch (err) {
      if (err instanceof OpenApiError) throw new Error(`document: ${err.message}`);
      throw err;
    }
  }

  private tenantServers(): TenantServers {
    const servers = (this.view?.base ?? this).tenantViews?.servers;
    if (!servers) throw new Error('this deployment does not take upstream servers per tenant');
    return servers;
  }

  private refuseTaken(name: string): void {
    const clash = this.takenBy(name);
    if (!clash) return;
    throw new Error(
      clash === name
        ? `"${name}" is the name of the deployment's integration ${clash}; choose another name`
        : `"${name}" would name its tools like the deployment's integration ${clash} (${name.replace(/-/g, '_')}_…); choose another name`,
    );
  }

  /** Reads the tenant's servers again on next use (this process just changed them). */
  forgetTenant(tenantId: string): void {
    (this.view?.base ?? this).tenantViews?.forget(tenantId);
  }

  /**
   * The deployment integration (built-in or operator upstream) that a tenant server named `name`
   * could shadow: the same name, the same flat tool prefix (`acme-docs` and `acme_docs` meet there),
   * or a prefix that extends the other's (`acme-docs`'s `search` and `acme`'s `docs_search` are both
   * `acme_docs_search` on /mcp), either way round.
   */
  takenBy(name: string): string | undefined {
    const base = this.view?.base ?? this;
    const prefix = name.replace(/-/g, '_');
    const overlaps = (other: string) => other === prefix || prefix.startsWith(`${other}_`) || other.startsWith(`${prefix}_`);
    return base.list().find((p) => p.manifest.name === name || overlaps(p.manifest.toolPrefix))?.manifest.name;
  }

  list(): Provider[] {
    return [...this.byName.values()];
  }

  get(name: string): Provider | undefined {
    return this.byName.get(name);
  }

  tools(): ToolEntry[] {
    return [...this.toolsByFlat.values(), ...this.dynamicEntries().byFlat.values()];
  }

  toolByFlatName(name: string): ToolEntry | undefined {
    return this.toolsByFlat.get(name) ?? this.dynamicEntries().byFlat.get(name);
  }

  toolByQualifiedName(name: string): ToolEntry | undefined {
    return this.toolsByQualified.get(name) ?? this.dynamicEntries().byQualified.get(name);
  }

  /** Changes when a provider's listed tools do (search indexes rebuild on it). */
  catalogVersion(): number {
    return this.list().reduce((sum, p) => sum + (p.dynamicTools?.version() ?? 0), 0);
  }

  /** The provider of `integration__tool` when it lists its tools at run time. */
  dynamicProviderOf(qualifiedName: string): Provider | undefined {
    const cut = qualifiedName.indexOf('__');
    const provider = cut > 0 ? this.byName.get(qualifiedName.slice(0, cut)) : undefined;
    return provider?.dynamicTools ? provider : undefined;
  }

  /**
   * The entry of `qualifiedName` as `credential` sees that provider's tools (listed when stale).
   * A listed tool never replaces a built-in one of the same name.
   */
  async dynamicTool(
    provider: Provider,
    qualifiedName: string,
    credential: Credential,
    signal: AbortSignal,
  ): Promise<ToolEntry | undefined> {
    const tools = (await provider.dynamicTools?.list(credential, signal)) ?? [];
    if (this.toolsByQualified.has(qualifiedName)) return undefined;
    const tool = tools.find((t) => `${provider.manifest.name}__${t.name}` === qualifiedName);
    if (!tool) return undefined;
    const entry = entryOf(provider, tool);
    return this.toolsByFlat.has(entry.flatName) ? undefined : entry;
  }

  /** Lists the shared catalogs that are missing or stale where no credential is needed (bounded wait). */
  async warmDynamicTools(): Promise<void> {
    await Promise.all(this.list().map((p) => p.dynamicTools?.warm()));
  }

  /** The integrations whose server could not be listed at the latest try (DynamicTools.unavailable). */
  unavailableIntegrations(): string[] {
    return this.list()
      .filter((p) => p.dynamicTools?.unavailable?.())
      .map((p) => p.manifest.name);
  }

  /** Closes upstream sessions (the process is stopping). A tenant's view owns nothing: its base closes all. */
  async close(): Promise<void> {
    if (this.view) return;
    await Promise.all([...this.list().map((p) => p.dynamicTools?.close()), this.tenantViews?.close()]);
  }

  private dynamicEntries() {
    const version = this.catalogVersion();
    if (version === this.dynamic.version) return this.dynamic;
    const byFlat = new Map<string, ToolEntry>();
    const byQualified = new Map<string, ToolEntry>();
    for (const provider of this.list()) {
      for (const tool of provider.dynamicTools?.shared() ?? []) {
        const entry = entryOf(provider, tool);
        // Built-in names win; a listed tool that would shadow one (or another listed one) is left out.
        if (this.toolsByFlat.has(entry.flatName) || this.toolsByQualified.has(entry.qualifiedName) || byFlat.has(entry.flatName)) continue;
        byFlat.set(entry.flatName, entry);
        byQualified.set(entry.qualifiedName, entry);
      }
    }
    this.dynamic = { version, byFlat, byQualified };
    return this.dynamic;
  }

  /**
   * oauth2 providers need a client id and secret (or discover their OAuth: upstream MCP servers);
   * other modes need nothing from the operator.
   */
  isConfigured(name: string): boolean {
    const provider = this.byName.get(name);
    if (!provider) return false;
    if (provider.manifest.auth !== 'oauth2' || provider.oauthFlow) return true;
    const env = this.env[name];
    return Boolean(env?.clientId && env?.clientSecret);
  }

  envVarNames(name: string): { clientId: string; clientSecret: string } {
    const prefix = this.byName.get(name)?.manifest.envPrefix ?? name.toUpperCase().replace(/-/g, '_');
    return { clientId: `${prefix}_CLIENT_ID`, clientSecret: `${prefix}_CLIENT_SECRET` };
  }

  apiBaseUrl(name: string): string {
    const provider = this.byName.get(name);
    return (this.env[name]?.urls.API_BASE_URL ?? provider?.manifest.apiBaseUrl ?? '').replace(/\/$/, '');
  }

  loginUrl(name: string): string | undefined {
    return this.env[name]?.urls.LOGIN_URL ?? this.byName.get(name)?.manifest.cookie?.loginUrl;
  }

  /**
   * The host whose cookies a capture keeps: the manifest's cookie domain, or the host of an
   * overridden `<PREFIX>_LOGIN_URL` outside that domain (a test or staging login site).
   */
  cookieDomain(name: string): string | undefined {
    const domain = this.byName.get(name)?.manifest.cookie?.domain;
    const override = this.env[name]?.urls.LOGIN_URL;
    if (!override) return domain;
    const host = new URL(override).hostname;
    return domain && (host === domain || host.endsWith(`.${domain}`)) ? domain : host;
  }

  /** How `name` is authorized with OAuth: its own flow (discovered), else its configured endpoints. */
  oauthFlow(name: string): OAuthFlow | undefined {
    const provider = this.byName.get(name);
    if (provider?.oauthFlow) return provider.oauthFlow;
    let flow = this.staticFlows.get(name);
    if (!flow) {
      const endpoints = this.oauth2(name);
      if (!endpoints) return undefined;
      flow = staticOAuthFlow(endpoints);
      this.staticFlows.set(name, flow);
    }
    return flow;
  }

  oauth2(name: string): ResolvedOAuth2 | undefined {
    const provider = this.byName.get(name);
    const oauth = provider?.manifest.oauth2;
    const env = this.env[name];
    if (!provider || !oauth || !env?.clientId || !env.clientSecret) return undefined;
    return {
      authorizeUrl: env.urls.AUTHORIZE_URL ?? oauth.authorizeUrl,
      tokenUrl: env.urls.TOKEN_URL ?? oauth.tokenUrl,
      revokeUrl: env.urls.REVOKE_URL ?? oauth.revokeUrl,
      scopes: oauth.scopes,
      scopeSeparator: oauth.scopeSeparator ?? ' ',
      authorizeParams: oauth.authorizeParams ?? {},
      clientId: env.clientId,
      clientSecret: env.clientSecret,
      clientAuth: oauth.clientAuth ?? 'client_secret_post',
      rotatesRefreshTokens: oauth.rotatesRefreshTokens ?? false,
    };
  }
}

function entryOf(provider: Provider, tool: ToolDefinition): ToolEntry {
  return {
    provider,
    tool,
    flatName: `${provider.manifest.toolPrefix}_${tool.name}`,
    qualifiedName: `${provider.manifest.name}__${tool.name}`,
  };
}
