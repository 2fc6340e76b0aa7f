import type { ListedTool, UpstreamCatalogStore } from '../../core/ports/upstream-tool-catalogs.js';
import type { Queryable } from './queryable.js';

/**
 * Upstream MCP servers' last tool listings (migration 1700000000027), shared by every process.
 * A listing is saved as the server sent it and converted (bounded, checked) again when read.
 */
export function upstreamCatalogStore(db: Queryable): UpstreamCatalogStore {
  return {
    async load(key) {
      const { rows } = await db.query('SELECT tools, listed_at FROM upstream_tool_catalogs WHERE catalog_key = $1', [key]);
      return rows[0] ? { tools: rows[0].tools as ListedTool[], listedAt: rows[0].listed_at as Date } : undefined;
    },
    async save(key, tools) {
      await db.query(
        `INSERT INTO upstream_tool_catalogs (catalog_key, tools, listed_at) VALUES ($1, $2, now())
         ON CONFLICT (catalog_key) DO UPDATE SET tools = EXCLUDED.tools, listed_at = now()`,
        [key, JSON.stringify(tools)],
      );
    },
  };
}

/** Forgets the saved listings whose key starts with `prefix` (a tenant's server was removed). */
export async function deleteUpstreamCatalogs(db: Queryable, prefix: string): Promise<void> {
  await db.query('DELETE FROM upstream_tool_catalogs WHERE starts_with(catalog_key, $1)', [prefix]);
}
