// A tenant's own upstream MCP servers: add (a catalog name or a JSON entry), list, remove.
// Never prints a secret: a pre-registered client secret is sealed and shown as `hasClientSecret`.
import type { Config } from '../../core/config.js';
import pkg from '../../package.json' with { type: 'json' };
import type { Keyring } from '../../platform/database/keyring.js';
import type { Queryable } from '../../platform/database/queryable.js';
import {
  addTenantUpstream,
  listTenantUpstreams,
  removeTenantUpstream,
  TenantUpstreamRefused,
  type TenantUpstreamSummary,
  tenantUpstreamSource,
} from '../../platform/database/tenant-upstream-servers.js';
import { builtinProviders } from '../../providers/builtin/index.js';
import { tenantOpenApiFactory } from '../../providers/openapi/tenant.js';
import { ProviderRegistry } from '../../providers/registry.js';
import { upstreamFactory, upstreamProviders } from '../../providers/remote-mcp/index.js';
import { tenantClientRedirectUri } from '../../providers/remote-mcp/tenant-client-redirect.js';
import { type Context, type Group, need, oneOptionCommand, requireTenant, UsageError } from './cli.js';

/** The deployment's registry as the server builds it, for the same checks the portal makes. */
function deploymentRegistry(config: Config, db: Queryable, keyring: Keyring): ProviderRegistry {
  const providers = [...builtinProviders, ...upstreamProviders(config, builtinProviders, { version: pkg.version })];
  return ProviderRegistry.fromConfig(providers, config).withTenantServers(
    tenantUpstreamSource(
      db,
      keyring,
      upstreamFactory(config, { version: pkg.version }),
      undefined,
      tenantOpenApiFactory({
        allowedHosts: config.UPSTREAM_MCP_ALLOWED_HOSTS,
        maxResponseBytes: config.CONNECTIONS_PROVIDER_RESPONSE_MAX_BYTES,
      }),
    ),
  );
}

/** An entry as admins see it, with the redirect URI its own OAuth client is registered with (if any). */
function withRedirectUri(config: Pick<Config, 'PUBLIC_BASE_URL'>, summary: TenantUpstreamSummary) {
  const redirectUri = tenantClientRedirectUri(config, summary.entry);
  return redirectUri ? { ...summary, redirectUri } : summary;
}

/**
 * Adds a server to a tenant from an entry's text (a catalog name or JSON), checked as the portal
 * checks it, and prints it; a refused entry is a UsageError naming what is wrong.
 */
export async function addTenantServer(ctx: Context, tenantId: string, text: string): Promise<void> {
  const keyring = ctx.keyring();
  const db = await ctx.db();
  await requireTenant(db, tenantId);
  let addition: Awaited<ReturnType<ProviderRegistry['tenantAddition']>>;
  try {
    addition = await deploymentRegistry(ctx.config, db, keyring).tenantAddition(text);
  } catch (err) {
    throw new UsageError(`entry: ${(err as Error).message}`);
  }
  try {
    ctx.out(withRedirectUri(ctx.config, await addTenantUpstream(db, keyring, { tenantId, createdBy: 'admin-cli', ...addition })));
  } catch (err) {
    if (err instanceof TenantUpstreamRefused) throw new UsageError(err.message);
    throw err;
  }
}

function positional(positionals: string[], what: string): string {
  const value = positionals[0];
  if (!value) throw new UsageError(`missing ${what}`);
  return value;
}

export const upstreamGroup: Group = {
  name: 'upstream',
  summary: "Manage a tenant's own upstream MCP servers (integrations only its people see)",
  commands: [
    {
      name: 'add',
      synopsis: '--tenant <id> <catalog-name | json-entry>',
      summary: 'Add an upstream MCP server for one tenant; prints it (never a secret)',
      details: [
        'The entry is a catalog name ("deepwiki") or a JSON entry of the same shape as in UPSTREAM_MCP_SERVERS',
        '(docs/guides/upstream-mcp.md), e.g. \'{"name":"acme","displayName":"Acme","url":"https://mcp.acme.example/mcp"}\'.',
        "Its name may not be a built-in integration's or one of UPSTREAM_MCP_SERVERS. Running servers see it within",
        'a few seconds (docs/guides/upstream-mcp.md, "Per tenant"). Needs ENCRYPTION_KEYS.',
        'An OpenAPI integration is an OPENAPI_INTEGRATIONS entry with "kind": "openapi" and the https URL of its',
        'document, which is fetched once, now, through the same network policy as upstream servers.',
      ].join('\n'),
      options: { tenant: { type: 'string' } },
      positionals: ['entry'],
      async run(values, positionals, ctx) {
        await addTenantServer(ctx, need(values, 'tenant'), positional(positionals, 'entry: a catalog name or a JSON entry'));
      },
    },
    oneOptionCommand(
      { name: 'list', summary: "List a tenant's own upstream MCP servers (never a secret)", option: 'tenant', placeholder: 'id' },
      async (tenantId, ctx) => {
        const db = await ctx.db();
        const tenant = await requireTenant(db, tenantId);
        ctx.out((await listTenantUpstreams(db, tenant.id)).map((summary) => withRedirectUri(ctx.config, summary)));
      },
    ),
    {
      name: 'remove',
      synopsis: '--tenant <id> <name>',
      summary: "Remove one of a tenant's upstream MCP servers",
      details:
        "Its people's stored API keys for it stay (a server added again under the name uses them); delete them on the Accounts page.",
      options: { tenant: { type: 'string' } },
      positionals: ['name'],
      async run(values, positionals, ctx) {
        const tenantId = need(values, 'tenant');
        const name = positional(positionals, 'name of the server to remove');
        const db = await ctx.db();
        await requireTenant(db, tenantId);
        if (!(await removeTenantUpstream(db, tenantId, name))) throw new UsageError(`tenant ${tenantId} has no upstream server "${name}"`);
        ctx.out(`removed ${name}`);
      },
    },
  ],
};
