import type { GuardedFetch } from '../../sdk/guarded-fetch.js';
import { type BearerChallenge, bearerChallenge } from './www-authenticate.js';

/** The protocol revision Switchboard's probe speaks. */
const PROBE_PROTOCOL_VERSION = '2025-11-25';

/**
 * Sends an unauthenticated `initialize` (what any MCP client sends first) and reads the answer's
 * Bearer challenge. Undefined when the server answered without one — it may still protect its
 * other methods, which the well-known metadata then says. The body is never read (an SSE stream
 * would stay open otherwise).
 */
export async function probeServer(server: URL, fetch: GuardedFetch): Promise<BearerChallenge | undefined> {
  const res = await fetch(server, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: PROBE_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'switchboard', version: '1' } },
    }),
  });
  await res.body?.cancel().catch(() => {});
  return res.status === 401 || res.status === 403 ? (bearerChallenge(res.headers.get('www-authenticate')) ?? {}) : undefined;
}
