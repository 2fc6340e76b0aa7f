import type { Config } from '../../core/config.js';
import type { Queryable } from '../../platform/database/queryable.js';
import { listTenantUpstreams } from '../../platform/database/tenant-upstream-servers.js';
import { builtinProviders } from '../../providers/builtin/index.js';
import { parseUpstreamServers } from '../../providers/remote-mcp/config.js';

/** Integration names and auth modes the admin CLI accepts: the built-ins and the operator's upstream MCP servers. */
export function knownIntegrations(config: Pick<Config, 'UPSTREAM_MCP_SERVERS'>): { name: string; auth: string }[] {
  return [
    ...builtinProviders.map((p) => ({ name: p.manifest.name, auth: p.manifest.auth })),
    ...parseUpstreamServers(config.UPSTREAM_MCP_SERVERS).map((e) => ({ name: e.name, auth: e.auth.type })),
  ];
}

/**
 * The integrations one tenant has: the deployment's and the tenant's own upstream servers
 * (`upstream add`). The database is read only when `names` holds one the deployment lacks.
 */
export async function knownIntegrationsOf(
  config: Pick<Config, 'UPSTREAM_MCP_SERVERS'>,
  db: () => Promise<Queryable>,
  tenantId: string,
  names: readonly string[] = [],
): Promise<{ name: string; auth: string }[]> {
  const known = knownIntegrations(config);
  if (names.every((n) => known.some((p) => p.name === n))) return known;
  const own = await listTenantUpstreams(await db(), tenantId);
  return [...known, ...own.map((s) => ({ name: s.name, auth: String((s.entry.auth as { type?: string } | undefined)?.type ?? 'none') }))];
}
