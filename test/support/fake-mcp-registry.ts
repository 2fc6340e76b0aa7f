import { type LocalServer, startLocalServer } from './local-server.js';

/**
 * A local MCP Registry serving the documented shapes of `GET /v0.1/servers` (preview API):
 * `{ servers: [{ server: { name, title?, description?, version, remotes?: [{ type, url, headers? }] }, _meta }], metadata }`,
 * filtered by `search` (a substring of the name), `version=latest` and `limit`. `answer` replaces
 * the body (a hostile registry); every request is recorded.
 */

export interface FakeRegistryServer {
  name: string;
  title?: string;
  description?: string;
  version?: string;
  remotes?: { type: string; url: string; headers?: { name: string; description?: string; isRequired?: boolean; isSecret?: boolean }[] }[];
  packages?: unknown[];
}

export interface FakeMcpRegistry {
  url: string;
  requests: URL[];
  /** A raw body to answer instead of the list (undefined: the list). */
  answer?: string;
  close(): Promise<void>;
}

export async function startFakeMcpRegistry(servers: FakeRegistryServer[]): Promise<FakeMcpRegistry> {
  const state: { answer?: string; requests: URL[] } = { requests: [] };
  const local: LocalServer = await startLocalServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://registry.local');
    state.requests.push(url);
    if (req.method !== 'GET' || url.pathname !== '/v0.1/servers') {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"title":"Not Found","status":404}');
      return;
    }
    if (state.answer !== undefined) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(state.answer);
      return;
    }
    const search = url.searchParams.get('search') ?? '';
    const limit = Number(url.searchParams.get('limit') ?? 30);
    const found = servers.filter((s) => s.name.toLowerCase().includes(search.toLowerCase())).slice(0, limit);
    const body = {
      servers: found.map((server) => ({
        server: { $schema: 'https://static.modelcontextprotocol.io/schemas/2025-10-17/server.schema.json', version: '1.0.0', ...server },
        _meta: { 'io.modelcontextprotocol.registry/official': { status: 'active', isLatest: true, publishedAt: '2026-11-01T00:00:00Z' } },
      })),
      metadata: { count: found.length },
    };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  return {
    url: local.url,
    requests: state.requests,
    get answer() {
      return state.answer;
    },
    set answer(value: string | undefined) {
      state.answer = value;
    },
    close: () => local.close(),
  };
}
