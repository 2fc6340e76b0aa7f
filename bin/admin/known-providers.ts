import type { Config } from '../../core/config.js';
import type { Queryable } from '../../platform/database/queryable.js';
import { listTenantUpstreams } from '../../platform/database/tenant-upstream-servers.js';
import { builtinProviders } from '../../providers/builtin/index.js';
import { openapiAuthMode, parseOpenApiIntegrations } from '../../providers/openapi/config.js';
import { parseUpstreamServers } from '../../providers/remote-mcp/config.js';

type KnownConfig = Pick<Config, 'UPSTREAM_MCP_SERVERS' | 'OPENAPI_INTEGRATIONS'>;

/**
 * Integration names and auth modes the admin CLI accepts: the built-ins, the operator's upstream
 * MCP servers and OpenAPI integrations — read from the same variables the server reads (only the
 * entries; the CLI never opens an OpenAPI document).
 */
export function knownIntegrations(config: KnownConfig): { name: string; auth: string }[] {
  return [
    ...builtinProviders.map((p) => ({ name: p.manifest.name, auth: p.manifest.auth })),
    ...parseUpstreamServers(config.UPSTREAM_MCP_SERVERS).map((e) => ({ name: e.name, auth: e.auth.type })),
    ...parseOpenApiIntegrations(config.OPENAPI_INTEGRATIONS).map((e) => ({ name: e.name, auth: openapiAuthMode(e) })),
  ];
}

/**
 * The integrations one tenant has: the deployment's and the tenant's own upstream servers
 * (`upstream add`). The database is read only when `names` holds one the deployment lacks.
 */
export async function knownIntegrationsOf(
  config: KnownConfig,
  db: () => Promise<Queryable>,
  tenantId: string,
  names: readonly string[] = [],
): Promise<{ name: string; auth: string }[]> {
  const known = knownIntegrations(config);
  if (names.every((n) => known.some((p) => p.name === n))) return known;
  const own = await listTenantUpstreams(await db(), tenantId);
  return [...known, ...own.map((s) => ({ name: s.name, auth: ownAuthMode(s.entry) }))];
}

/** A tenant entry's auth mode as its provider's manifest says it (an OpenAPI bearer token is entered like a key). */
function ownAuthMode(entry: Record<string, unknown>): string {
  const type = String((entry.auth as { type?: string } | undefined)?.type ?? 'none');
  return entry.kind === 'openapi' && type === 'bearer' ? 'apikey' : type;
}
