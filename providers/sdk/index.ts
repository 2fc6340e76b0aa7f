import type { z } from 'zod';
import type { ProviderEnvSpec } from '../../core/config.js';
import type { BrowserEngine } from '../../core/ports/browser-engine.js';
import type { JotsStore } from '../../core/ports/jots.js';
import type { OAuthFlow } from './oauth-flow.js';

/**
 * The provider SDK. A provider is a manifest plus tools. A tool never sees the server or the
 * store: it gets its credential, a deadline-bound `fetch` rooted at the provider's API base URL,
 * and a logger through its context.
 */

export type AuthMode = 'oauth2' | 'apikey' | 'cookie' | 'none';
export type ToolAccess = 'read' | 'write' | 'destructive';

export interface OAuth2Manifest {
  authorizeUrl: string;
  tokenUrl: string;
  /** RFC 7009 revocation endpoint, when the service has one. */
  revokeUrl?: string;
  scopes: string[];
  /** Extra authorize parameters the service wants (Atlassian: audience, prompt). */
  authorizeParams?: Record<string, string>;
  /** True when every refresh returns a new refresh token and the old one stops working. */
  rotatesRefreshTokens?: boolean;
  /** Between scopes in the authorize request's `scope` (default a space; Slack and Shopify want commas). */
  scopeSeparator?: string;
  clientAuth?: 'client_secret_post' | 'client_secret_basic';
}

export interface ApiKeyField {
  name: string;
  label: string;
  secret: boolean;
  placeholder?: string;
}

export interface ProviderManifest {
  /** Integration name as agents see it, e.g. `atlassian-jira`. */
  name: string;
  version: string;
  displayName: string;
  description: string;
  auth: AuthMode;
  /** Prefix of its environment variables, e.g. `ATLASSIAN_JIRA` → `ATLASSIAN_JIRA_CLIENT_ID`. */
  envPrefix: string;
  /** Prefix of flat tool names, e.g. `jira` → `jira_search_issues`. */
  toolPrefix: string;
  apiBaseUrl?: string;
  oauth2?: OAuth2Manifest;
  apiKeyFields?: ApiKeyField[];
  cookie?: { loginUrl: string; domain: string };
  /**
   * Another integration of the same service whose tools this one's make way for: where a tool of
   * each matches a request about as well (SEARCH_DEFERRAL), the other's ranks first — GitHub's
   * hand-written tools before those imported from its OpenAPI document.
   */
  defersTo?: string;
}

/** The secret material a tool gets, looked up by an activity, never carried by a workflow. */
export type Credential =
  | { type: 'oauth2'; accessToken: string; tokenType?: string }
  | { type: 'apikey'; fields: Record<string, string> }
  | { type: 'cookie'; cookies: { name: string; value: string; domain: string; path?: string }[] }
  | { type: 'none' };

export interface ToolLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface ToolContext {
  credential: Credential;
  /**
   * `fetch` with the deadline's AbortSignal and the provider's base URL applied to relative paths.
   * It refuses (OutsideApiBase) any URL outside the API base, follows redirects only inside it, and
   * stops reading a body at CONNECTIONS_PROVIDER_RESPONSE_MAX_BYTES (ResponseTooLarge). Build paths
   * from arguments with `apiPath`/`segment` (url-path.ts), never by splicing strings.
   */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  apiBaseUrl: string;
  signal: AbortSignal;
  logger: ToolLogger;
  caller: { tenantId: string; userId: string };
  /** What built-in providers need from the host process; the worker fills it, tests may stub it. */
  services?: ToolServices;
}

/** Services the worker lends built-in tools (their I/O lives outside providers/). */
export interface ToolServices {
  jots?: JotsStore;
  browser?: BrowserEngine;
}

export interface ToolDefinition<S extends z.ZodType = z.ZodType> {
  /** Unqualified name, e.g. `list_repos`. */
  name: string;
  description: string;
  access: ToolAccess;
  /** OAuth scopes the connection must have been granted. */
  scopes?: string[];
  input: S;
  /**
   * The arguments' JSON Schema when it comes from elsewhere (an upstream MCP server) rather than
   * from `input`; `input` then validates against it.
   */
  inputSchema?: Record<string, unknown>;
  /**
   * `input` has asynchronous checks (an upstream tool's arguments are checked in a worker thread):
   * parsed with safeParseAsync. Every other input is parsed synchronously, since zod's asynchronous
   * parse overflows the stack on an array of ~10^5 failing items.
   */
  asyncInput?: true;
  run(args: z.infer<S>, ctx: ToolContext): Promise<unknown>;
}

/**
 * Tools a provider lists at run time (an upstream MCP server) instead of declaring: per credential,
 * with a shared catalog of the latest listing for search.
 */
export interface DynamicTools {
  /** The most recent listing for anyone: what search and get_tool_schema show. */
  shared(): ToolDefinition[];
  /** Changes whenever shared() does, so an index built on it knows to rebuild. */
  version(): number;
  /** The tools this credential sees (cached with a TTL, listed again after list_changed). */
  list(credential: Credential, signal: AbortSignal): Promise<ToolDefinition[]>;
  /** Lists the shared catalog when it is missing or stale, where that needs no credential. */
  warm(): Promise<void>;
  /**
   * True while the latest try to list the shared catalog failed (the server is down or refuses):
   * search then names the integration as unavailable instead of showing it as having no tools.
   */
  unavailable?(): boolean;
  /** Ends open sessions with the server. */
  close(): Promise<void>;
}

export interface AccountIdentity {
  /** The service's stable id for the account, so a reconnect updates it instead of adding one. */
  externalId: string;
  /** How people tell accounts apart, e.g. the GitHub login. */
  label: string;
}

export interface Provider {
  manifest: ProviderManifest;
  tools: ToolDefinition[];
  dynamicTools?: DynamicTools;
  /**
   * OAuth learned at run time (an upstream MCP server's discovered authorization server); without
   * it, an oauth2 provider uses its manifest's endpoints and the operator's client (registry.ts).
   */
  oauthFlow?: OAuthFlow;
  /**
   * What a credential stored for this provider belongs to, when the name alone does not say it (an
   * upstream MCP server: its URL). A stored credential bound to anything else is never sent: the
   * name was given to another server since (a tenant removed a server and added another under it).
   */
  credentialBinding?: string;
  /** Asks the service who a fresh credential belongs to. */
  identify?: (ctx: ToolContext) => Promise<AccountIdentity>;
  /** Puts the credential on a request; the default sends OAuth tokens as a Bearer header. */
  authorize?: (credential: Credential, headers: Headers) => void;
  /**
   * Cookie integrations: a cheap request that says whether the captured session still works
   * (true: signed in; false: the service no longer knows the session). Throw when it cannot tell
   * (network, 5xx): that is not taken as signed out. Switchboard calls it at Capture (false stores
   * nothing) and for `list_integrations`, cached briefly per account (`COOKIE_CHECK_TTL_SEC`); a
   * false there marks the account `needs_reauth`.
   */
  checkSession?: (ctx: ToolContext) => Promise<boolean>;
}

export const defineTool = <S extends z.ZodType>(tool: ToolDefinition<S>): ToolDefinition => tool as unknown as ToolDefinition;

export function defineProvider(
  manifest: ProviderManifest,
  tools: ToolDefinition[] = [],
  hooks: Pick<Provider, 'identify' | 'authorize' | 'checkSession'> = {},
): Provider {
  const names = new Set<string>();
  for (const tool of tools) {
    if (!/^[a-z][a-z0-9_]*$/.test(tool.name)) throw new Error(`${manifest.name}: bad tool name "${tool.name}"`);
    if (names.has(tool.name)) throw new Error(`${manifest.name}: duplicate tool "${tool.name}"`);
    names.add(tool.name);
  }
  return { manifest, tools, ...hooks };
}

/** URL settings every provider lets the operator override (GitHub Enterprise, tests). */
export const URL_SETTINGS = ['AUTHORIZE_URL', 'TOKEN_URL', 'REVOKE_URL', 'API_BASE_URL', 'LOGIN_URL'] as const;

export function providerEnvSpec(manifest: ProviderManifest): ProviderEnvSpec {
  return {
    name: manifest.name,
    envPrefix: manifest.envPrefix,
    urlSettings: URL_SETTINGS,
    needsClientCredentials: manifest.auth === 'oauth2',
  };
}
