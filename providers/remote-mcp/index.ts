import { ConfigError } from '../../core/config.js';
import type { AllowedHost } from '../../core/network-policy.js';
import type { UpstreamCatalogStore } from '../../core/ports/upstream-tool-catalogs.js';
import type { UpstreamEntry } from '../../core/upstream-entry.js';
import type { Provider, ToolLogger } from '../sdk/index.js';
import { parseUpstreamServers } from './config.js';
import type { UpstreamOAuthOptions } from './oauth-flow.js';
import { upstreamProvider } from './provider.js';

export type { UpstreamOAuthOptions } from './oauth-flow.js';
export { upstreamProvider } from './provider.js';

/** What every upstream provider of a deployment is built with (features/connections/upstream-services.ts gives oauth and catalog). */
interface UpstreamFactoryOptions {
  version: string;
  logger?: ToolLogger;
  oauth?: UpstreamOAuthOptions;
  catalog?: UpstreamCatalogStore;
}

interface UpstreamConfig {
  UPSTREAM_MCP_SERVERS?: string;
  UPSTREAM_MCP_ALLOWED_HOSTS: AllowedHost[];
  UPSTREAM_MCP_TOOLS_TTL_SEC: number;
  UPSTREAM_MCP_SESSION_IDLE_SEC?: number;
  CONNECTIONS_PROVIDER_RESPONSE_MAX_BYTES: number;
}

/**
 * The operator's upstream MCP servers (UPSTREAM_MCP_SERVERS) as providers. Throws a ConfigError
 * for a bad entry or a name a built-in integration has.
 */
export function upstreamProviders(config: UpstreamConfig, builtins: readonly Provider[], options: UpstreamFactoryOptions): Provider[] {
  const entries = parseUpstreamServers(config.UPSTREAM_MCP_SERVERS);
  const problems: { variable: string; message: string }[] = [];
  for (const entry of entries) {
    const prefix = entry.name.replace(/-/g, '_');
    const clash = builtins.find((p) => p.manifest.name === entry.name || p.manifest.toolPrefix === prefix);
    if (clash)
      problems.push({
        variable: 'UPSTREAM_MCP_SERVERS',
        message: `"${entry.name}" is the name of the built-in integration ${clash.manifest.name}`,
      });
  }
  if (problems.length) throw new ConfigError(problems);
  const build = upstreamFactory(config, options);
  return entries.map((entry) => build(entry));
}

/**
 * The one way this deployment turns an entry into a provider: the operator's servers above, and
 * tenants' own servers (ProviderRegistry.withTenantServers), built with the same options.
 */
export function upstreamFactory(
  config: UpstreamConfig,
  options: UpstreamFactoryOptions,
): (entry: UpstreamEntry, catalogScope?: string) => Provider {
  return (entry, catalogScope) =>
    upstreamProvider(entry, {
      allowedHosts: config.UPSTREAM_MCP_ALLOWED_HOSTS,
      maxResponseBytes: config.CONNECTIONS_PROVIDER_RESPONSE_MAX_BYTES,
      toolsTtlSec: config.UPSTREAM_MCP_TOOLS_TTL_SEC,
      sessionIdleSec: config.UPSTREAM_MCP_SESSION_IDLE_SEC,
      version: options.version,
      logger: options.logger,
      oauth: options.oauth,
      catalog: options.catalog,
      catalogScope,
    });
}

/** The factory for tenants' own servers: each tenant's shared tool catalog is its own (`tenant:<id>`). */
export function tenantUpstreamFactory(
  config: UpstreamConfig,
  options: UpstreamFactoryOptions,
): (entry: UpstreamEntry, tenantId: string) => Provider {
  const build = upstreamFactory(config, options);
  return (entry, tenantId) => build(entry, `tenant:${tenantId}`);
}
