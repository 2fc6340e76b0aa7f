import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { ListedTool } from '../../core/ports/upstream-tool-catalogs.js';
import { builtinProviders } from '../../providers/builtin/index.js';
import { ProviderRegistry } from '../../providers/registry.js';
import { upstreamProvider } from '../../providers/remote-mcp/index.js';
import type { Provider } from '../../providers/sdk/index.js';

/**
 * The real catalogs the search evaluation ranks: the tools/list of published MCP servers
 * (test/fixtures/search-catalogs/*.json, written by bench/search-capture-catalogs.ts) and
 * server-everything's saved listing, each served by the product's own upstream provider from its
 * saved listing, as a process shows a server nobody has connected yet; the built-in integrations
 * beside them. Nothing is started and nothing is sent anywhere.
 */
export const CATALOGS_DIR = resolve(import.meta.dirname, '../../test/fixtures/search-catalogs');
const EVERYTHING_PATH = resolve(import.meta.dirname, '../../test/fixtures/upstream-everything-catalog.json');

export interface SavedCatalog {
  name: string;
  displayName: string;
  description: string;
  tools: ListedTool[];
}

export function loadSavedCatalogs(): SavedCatalog[] {
  const captured = readdirSync(CATALOGS_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => JSON.parse(readFileSync(join(CATALOGS_DIR, f), 'utf8')) as SavedCatalog);
  const everything = JSON.parse(readFileSync(EVERYTHING_PATH, 'utf8')) as { tools: ListedTool[] };
  return [
    ...captured,
    {
      name: 'everything',
      displayName: 'Everything',
      description: 'MCP server that exercises all the features of the MCP protocol',
      tools: everything.tools,
    },
  ];
}

/** An upstream provider showing a saved listing (auth by key, so it is never listed live here). */
export function savedUpstream(catalog: SavedCatalog): Provider {
  return upstreamProvider(
    {
      name: catalog.name,
      displayName: catalog.displayName,
      url: `https://${catalog.name}.example/mcp`,
      description: catalog.description.slice(0, 500),
      auth: { type: 'apikey', header: 'X-Api-Key', prefix: '', label: 'API key' },
    },
    {
      allowedHosts: [],
      maxResponseBytes: 1024 * 1024,
      toolsTtlSec: 300,
      version: 'eval',
      catalog: { load: async () => ({ tools: catalog.tools, listedAt: new Date(0) }), save: async () => {} },
    },
  );
}

/** Built-ins and every saved catalog (or only `names`), tools listed and ready for the index. */
export async function realCatalogRegistry(options: { builtins?: boolean; names?: string[] } = {}): Promise<ProviderRegistry> {
  const catalogs = loadSavedCatalogs().filter((c) => !options.names || options.names.includes(c.name));
  const registry = new ProviderRegistry([...(options.builtins === false ? [] : builtinProviders), ...catalogs.map(savedUpstream)]);
  await registry.warmDynamicTools();
  return registry;
}
