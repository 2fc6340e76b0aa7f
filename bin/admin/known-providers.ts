import type { Config } from '../../core/config.js';
import { builtinProviders } from '../../providers/index.js';
import { parseUpstreamServers } from '../../providers/mcp-upstream/config.js';

/** Integration names and auth modes the admin CLI accepts: the built-ins and the operator's upstream MCP servers. */
export function knownIntegrations(config: Pick<Config, 'UPSTREAM_MCP_SERVERS'>): { name: string; auth: string }[] {
  return [
    ...builtinProviders.map((p) => ({ name: p.manifest.name, auth: p.manifest.auth })),
    ...parseUpstreamServers(config.UPSTREAM_MCP_SERVERS).map((e) => ({ name: e.name, auth: e.auth.type })),
  ];
}
