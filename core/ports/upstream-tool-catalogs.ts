/**
 * What an upstream MCP provider (providers/remote-mcp) needs from storage: the last tool listing
 * of each server, shared between processes and restarts. platform/database/upstream-tool-catalogs.ts implements it.
 */

/** One tool as an upstream MCP server lists it (`tools/list`), with only the fields Switchboard reads. */
export interface ListedTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: unknown;
  annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean; title?: string };
}

/** The shared catalog's storage: the last listing of a server, as the server sent it. */
export interface UpstreamCatalogStore {
  load(key: string): Promise<{ tools: ListedTool[]; listedAt: Date } | undefined>;
  save(key: string, tools: ListedTool[]): Promise<void>;
}
