import { ConfigError } from '../../core/config.js';
import type { AllowedHost } from '../../core/network-policy.js';
import type { Provider, ToolLogger } from '../sdk.js';
import { parseUpstreamServers } from './config.js';
import type { UpstreamOAuthOptions } from './oauth-flow.js';
import { type UpstreamCatalogStore, upstreamProvider } from './provider.js';

export { loadCatalog, parseUpstreamServers } from './config.js';
export type { UpstreamEntry } from './entry.js';
export type { UpstreamOAuthOptions } from './oauth-flow.js';
export { type UpstreamCatalogStore, upstreamProvider } from './provider.js';
export type { ListedTool } from './tools.js';

interface UpstreamConfig {
  UPSTREAM_MCP_SERVERS?: string;
  UPSTREAM_MCP_ALLOWED_HOSTS: AllowedHost[];
  UPSTREAM_MCP_TOOLS_TTL_SEC: number;
  CONNECTIONS_PROVIDER_RESPONSE_MAX_BYTES: number;
}

/**
 * The operator's upstream MCP servers (UPSTREAM_MCP_SERVERS) as providers. Throws a ConfigError
 * for a bad entry or a name a built-in integration has.
 */
export function upstreamProviders(
  config: UpstreamConfig,
  builtins: readonly Provider[],
  options: { version: string; logger?: ToolLogger; oauth?: UpstreamOAuthOptions; catalog?: UpstreamCatalogStore },
): Provider[] {
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
  return entries.map((entry) =>
    upstreamProvider(entry, {
      allowedHosts: config.UPSTREAM_MCP_ALLOWED_HOSTS,
      maxResponseBytes: config.CONNECTIONS_PROVIDER_RESPONSE_MAX_BYTES,
      toolsTtlSec: config.UPSTREAM_MCP_TOOLS_TTL_SEC,
      version: options.version,
      logger: options.logger,
      oauth: options.oauth,
      catalog: options.catalog,
    }),
  );
}
