// The official MCP Registry: search it, and add a remote server from it to a tenant by name.
import {
  findMcpRegistryServer,
  McpRegistryError,
  type RegistryServer,
  registryUpstreamEntry,
  searchMcpRegistry,
} from '../../providers/remote-mcp/mcp-registry.js';
import { type Context, type Group, need, UsageError } from './cli.js';
import { addTenantServer } from './upstreams.js';

const registryOf = (ctx: Context) => ({ baseUrl: ctx.config.MCP_REGISTRY_URL });

/** A registry call whose failure is the operator's to read (unreachable, a bad answer), not a crash. */
async function asked<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof McpRegistryError) throw new UsageError(err.message);
    throw err;
  }
}

const shown = (server: RegistryServer) => ({
  name: server.name,
  ...(server.title && { title: server.title }),
  version: server.version,
  ...(server.description && { description: server.description }),
  /** What `registry add` would add (null: the server has no remote endpoint, only packages to run). */
  entry: registryUpstreamEntry(server) ?? null,
});

export const registryGroup: Group = {
  name: 'registry',
  summary: 'Find remote MCP servers in the MCP Registry (MCP_REGISTRY_URL) and add one to a tenant',
  commands: [
    {
      name: 'search',
      synopsis: '<text>',
      summary: 'Servers whose registry name contains <text> (latest versions), each with the entry it would add',
      details: 'An operator pastes an entry into UPSTREAM_MCP_SERVERS to offer the server to every tenant.',
      positionals: ['text'],
      async run(_, positionals, ctx) {
        const text = positionals[0];
        if (!text) throw new UsageError('missing text to search for');
        ctx.out((await asked(() => searchMcpRegistry(registryOf(ctx), text))).map(shown));
      },
    },
    {
      name: 'add',
      synopsis: '--tenant <id> [--as <name>] [--auth none|oauth2] <registry-name>',
      summary: "Add a registry server's remote endpoint as one of a tenant's upstream servers; prints it",
      details: [
        'The entry is made from the registry (its streamable-HTTP endpoint, else SSE; a secret header it asks for',
        'becomes an API key) and checked as `upstream add` checks a JSON entry. --as names the integration',
        '(default: the last part of the registry name); --auth oauth2 for a server that signs people in.',
      ].join('\n'),
      options: { tenant: { type: 'string' }, as: { type: 'string' }, auth: { type: 'string' } },
      positionals: ['registry-name'],
      async run(values, positionals, ctx) {
        const tenantId = need(values, 'tenant');
        const name = positionals[0];
        if (!name) throw new UsageError('missing registry-name, e.g. io.github.acme/weather');
        const auth = values.auth;
        if (auth !== undefined && auth !== 'none' && auth !== 'oauth2') throw new UsageError('--auth: expected none or oauth2');
        const server = await asked(() => findMcpRegistryServer(registryOf(ctx), name));
        if (!server) throw new UsageError(`the MCP Registry has no server named "${name}" (try \`registry search\`)`);
        const entry = registryUpstreamEntry(server, {
          ...(typeof values.as === 'string' && { as: values.as }),
          ...(auth && { auth }),
        });
        if (!entry) throw new UsageError(`${name} has no remote endpoint in the registry (it is published as a package to run)`);
        await addTenantServer(ctx, tenantId, JSON.stringify(entry));
      },
    },
  ],
};
