import { ConfigError } from '../../core/config.js';
import type { AllowedHost } from '../../core/network-policy.js';
import type { Provider, ToolLogger } from '../sdk.js';
import { parseUpstreamServers } from './config.js';
import type { UpstreamEntry } from './entry.js';
import { upstreamProvider } from './provider.js';

export { loadCatalog, parseTenantUpstream, parseUpstreamServers } from './config.js';
export type { UpstreamEntry } from './entry.js';
export { upstreamProvider } from './provider.js';

interface UpstreamConfig {
  UPSTREAM_MCP_SERVERS?: string;
  UPSTREAM_MCP_ALLOWED_HOSTS: AllowedHost[];
  UPSTREAM_MCP_TOOLS_TTL_SEC: number;
  CONNECTIONS_PROVIDER_RESPONSE_MAX_BYTES: number;
}

/**
 * The operator's upstream MCP servers (UPSTREAM_MCP_SERVERS) as providers. Throws a ConfigError
 * for a bad entry, a name a built-in integration has, or an `oauth2` entry (its module is not in
 * this build yet).
 */
export function upstreamProviders(
  config: UpstreamConfig,
  builtins: readonly Provider[],
  options: { version: string; logger?: ToolLogger },
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
    if (entry.auth.type === 'oauth2') {
      problems.push({
        variable: 'UPSTREAM_MCP_SERVERS',
        message: `"${entry.name}" uses auth oauth2, which this build does not offer yet for upstream servers; use "none" or "apikey"`,
      });
    }
  }
  if (problems.length) throw new ConfigError(problems);
  return entries.map(upstreamFactory(config, options));
}

/**
 * The one way this deployment turns an entry into a provider: the operator's servers above, and
 * tenants' own servers (ProviderRegistry.withTenantServers), built with the same options.
 */
export function upstreamFactory(
  config: UpstreamConfig,
  options: { version: string; logger?: ToolLogger },
): (entry: UpstreamEntry) => Provider {
  return (entry) =>
    upstreamProvider(entry, {
      allowedHosts: config.UPSTREAM_MCP_ALLOWED_HOSTS,
      maxResponseBytes: config.CONNECTIONS_PROVIDER_RESPONSE_MAX_BYTES,
      toolsTtlSec: config.UPSTREAM_MCP_TOOLS_TTL_SEC,
      version: options.version,
      logger: options.logger,
    });
}
