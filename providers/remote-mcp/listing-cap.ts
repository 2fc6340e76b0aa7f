import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { capResponse } from '../sdk/response-cap.js';

/**
 * A fetch for an MCP session whose `tools/list` answers stop at `maxBytes`. The MCP SDK parses and
 * validates a whole page on the event loop that serves every tenant (about 0.2 s per megabyte here);
 * a page of the response cap (10 MB) would hold it for seconds, and a server can force a listing
 * with `notifications/tools/list_changed`. Other answers keep the session's own cap.
 */
export function cappingListings(fetch: FetchLike, maxBytes: number): FetchLike {
  return async (input, init) => {
    const res = await fetch(input, init);
    return isToolsList(init?.body) ? capResponse(res, maxBytes) : res;
  };
}

/** Whether a request body is a JSON-RPC `tools/list` (the SDK sends one message per POST). */
function isToolsList(body: unknown): boolean {
  if (typeof body !== 'string' || body.length > 64 * 1024 || !body.includes('"tools/list"')) return false;
  try {
    return (JSON.parse(body) as { method?: unknown }).method === 'tools/list';
  } catch {
    return false;
  }
}
