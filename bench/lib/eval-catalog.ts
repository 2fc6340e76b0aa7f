import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ListedTool } from '../../core/ports/upstream-tool-catalogs.js';
import { builtinProviders } from '../../providers/builtin/index.js';
import { ProviderRegistry } from '../../providers/registry.js';
import { upstreamProvider } from '../../providers/remote-mcp/index.js';

/**
 * The catalog the search evaluation ranks: the built-in integrations and one upstream MCP server,
 * @modelcontextprotocol/server-everything as integration `everything`, whose tools reach the index
 * the way a deployment's do. Its provider is built by the product's own factory
 * (`upstreamProvider`) and reads its listing from the shared catalog store (a listing saved from
 * the real server, test/fixtures/upstream-everything-catalog.json) exactly as a process that has not
 * listed the server itself does; the registry then serves those tools from `tools()` to
 * `toolIndexFor`, as for search_tools. Nothing is started and nothing is sent anywhere.
 */
export const UPSTREAM_CATALOG_PATH = resolve(import.meta.dirname, '../../test/fixtures/upstream-everything-catalog.json');

export async function evalRegistry(): Promise<ProviderRegistry> {
  const saved = JSON.parse(readFileSync(UPSTREAM_CATALOG_PATH, 'utf8')) as { tools: ListedTool[] };
  const everything = upstreamProvider(
    {
      name: 'everything',
      displayName: 'Everything',
      url: 'https://everything.example/mcp',
      // What an operator would write: the package's own description.
      description: 'MCP server that exercises all the features of the MCP protocol',
      // An auth: none server is also listed live when searched; with a key it is shown from the saved
      // listing alone, so the evaluation needs no server. Auth plays no part in ranking.
      auth: { type: 'apikey', header: 'X-Api-Key', prefix: '', label: 'API key' },
    },
    {
      allowedHosts: [],
      maxResponseBytes: 1024 * 1024,
      toolsTtlSec: 300,
      version: 'eval',
      catalog: {
        load: async () => ({ tools: saved.tools, listedAt: new Date(0) }),
        save: async () => {},
      },
    },
  );
  const registry = new ProviderRegistry([...builtinProviders, everything]);
  await registry.warmDynamicTools();
  if (!registry.tools().some((e) => e.provider === everything)) throw new Error('the saved upstream listing gave no tools');
  return registry;
}
