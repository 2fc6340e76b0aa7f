import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

/**
 * A real upstream MCP server for tests, built with the official SDK: Streamable HTTP over real HTTP,
 * stateful (it keeps sessions, and answers 404 to a session it no longer has). With `apiKey`, every
 * request needs `X-Api-Key: <apiKey>` (else 401). It records tool calls, so tests can count what
 * reached it.
 */
export interface TestUpstream {
  url: string;
  port: number;
  /** Names of tool calls that reached a tool, in order. */
  calls: string[];
  /** Headers of every request, in order. */
  requests: { method: string; sessionId?: string; apiKey?: string }[];
  /** tools/list pages of `listedSchemas` answered. */
  readonly listPages: number;
  /** Drops every session, as a restarted server would. */
  dropSessions(): void;
  /** Adds a tool and tells open sessions their tool list changed. */
  addTool(name: string): void;
  /** Tells every open session its tool list changed (notifications/tools/list_changed), changing nothing; answers how many were told. */
  announceToolsChanged(): number;
  close(): Promise<void>;
}

export async function startTestUpstream(
  options: {
    apiKey?: string;
    /**
     * Calls of these tools reach the server (they are counted in `calls`) and are never answered:
     * `reset` destroys the connection before any answer, `end` opens the answer's event stream and
     * closes it without the result (a server that crashed mid-call, or a proxy that cut it).
     */
    cutCalls?: Record<string, 'reset' | 'end'>;
    extraTools?: (server: McpServer) => void;
    /**
     * Tools listed with these raw input schemas, exactly as written (a hostile server's), and only
     * them: tools/list answers these alone. Each takes any arguments and answers its name, unless
     * extraTools registered a tool of that name.
     */
    listedSchemas?: Record<string, Record<string, unknown>>;
    /** A request with a wrong `apiKey` is refused this much later, as servers that slow down guessing do. */
    refusalDelayMs?: number;
    /** tools/list of `listedSchemas` answers this many tools a page (with a cursor to the next), else all at once. */
    listPageSize?: number;
  } = {},
): Promise<TestUpstream> {
  const calls: string[] = [];
  const requests: TestUpstream['requests'] = [];
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; server: McpServer }>();
  const added: string[] = [];
  let listPages = 0;

  function build(): McpServer {
    const server = new McpServer({ name: 'test-upstream', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
    server.registerTool(
      'echo',
      {
        description: 'Echoes a message back',
        inputSchema: { message: z.string().max(100) },
        annotations: { readOnlyHint: true },
      },
      async ({ message }) => {
        calls.push('echo');
        return { content: [{ type: 'text', text: `echo: ${message}` }] };
      },
    );
    server.registerTool(
      'Add-Numbers',
      {
        description: 'Adds two numbers, answering structured content',
        inputSchema: { a: z.number(), b: z.number() },
        outputSchema: { sum: z.number() },
        annotations: { readOnlyHint: true },
      },
      async ({ a, b }) => {
        calls.push('Add-Numbers');
        return { content: [{ type: 'text', text: String(a + b) }], structuredContent: { sum: a + b } };
      },
    );
    server.registerTool('delete_everything', { description: 'Deletes every record', annotations: { destructiveHint: true } }, async () => {
      calls.push('delete_everything');
      return { content: [{ type: 'text', text: 'deleted' }] };
    });
    server.registerTool(
      'fail',
      { description: 'Always fails with a message', inputSchema: { secret: z.string().optional() }, annotations: { readOnlyHint: true } },
      async ({ secret }) => {
        calls.push('fail');
        return { isError: true, content: [{ type: 'text', text: `it broke: ${secret ?? ''} ${'x'.repeat(500)}` }] };
      },
    );
    server.registerTool('picture', { description: 'Answers an image and a text', annotations: { readOnlyHint: true } }, async () => {
      calls.push('picture');
      return {
        content: [
          { type: 'text', text: 'a pixel' },
          { type: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=' },
        ],
      };
    });
    server.registerTool(
      'wait',
      {
        description: 'Answers after a given number of milliseconds',
        inputSchema: { ms: z.number().int().min(0).max(5000) },
        annotations: { readOnlyHint: true },
      },
      async ({ ms }) => {
        await new Promise((r) => setTimeout(r, ms));
        return { content: [{ type: 'text', text: `waited ${ms}` }] };
      },
    );
    server.registerTool('slow', { description: 'Takes five seconds', annotations: { readOnlyHint: true } }, async () => {
      calls.push('slow');
      await new Promise((r) => setTimeout(r, 5000));
      return { content: [{ type: 'text', text: 'done' }] };
    });
    for (const name of added) {
      server.registerTool(name, { description: `Added later: ${name}`, annotations: { readOnlyHint: true } }, async () => {
        calls.push(name);
        return { content: [{ type: 'text', text: name }] };
      });
    }
    options.extraTools?.(server);
    const listed = options.listedSchemas;
    if (listed) {
      for (const name of Object.keys(listed)) {
        try {
          server.registerTool(name, { description: `Listed with a hand-written schema: ${name}` }, async () => {
            calls.push(name);
            return { content: [{ type: 'text', text: name }] };
          });
        } catch {
          // extraTools registered it: its own handler answers.
        }
      }
      // Listed read-only: their calls run without an approval (what these tools test is the schema).
      const all = Object.entries(listed).map(([name, inputSchema]) => ({
        name,
        description: `Hand-written schema: ${name}`,
        inputSchema,
        annotations: { readOnlyHint: true },
      }));
      const pageSize = options.listPageSize ?? all.length;
      server.server.setRequestHandler(ListToolsRequestSchema, async (request) => {
        listPages++;
        const from = Number(request.params?.cursor ?? 0) || 0;
        const to = from + pageSize;
        return { tools: all.slice(from, to), ...(to < all.length && { nextCursor: String(to) }) };
      });
    }
    return server;
  }

  const httpServer = http.createServer(async (req, res) => {
    const sessionId = req.headers['mcp-session-id'] as string | undefined;
    const apiKey = req.headers['x-api-key'] as string | undefined;
    requests.push({ method: req.method ?? '', sessionId, apiKey });
    if (options.apiKey && apiKey !== options.apiKey) {
      if (options.refusalDelayMs) await new Promise((resolve) => setTimeout(resolve, options.refusalDelayMs));
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'bad key' }));
      return;
    }
    if (sessionId) {
      const session = sessions.get(sessionId);
      if (!session) {
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
        return;
      }
      const cut = options.cutCalls && req.method === 'POST' ? await readJson(req) : undefined;
      const how = cut && cut.method === 'tools/call' ? options.cutCalls?.[cut.params?.name ?? ''] : undefined;
      if (how) {
        calls.push(cut!.params!.name!);
        if (how === 'reset') req.socket.destroy();
        else res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': sessionId }).end();
        return;
      }
      await session.transport.handleRequest(req, res, cut);
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    const server = build();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, server });
      },
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  const port = (httpServer.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    calls,
    requests,
    get listPages() {
      return listPages;
    },
    dropSessions() {
      for (const { server } of sessions.values()) void server.close();
      sessions.clear();
    },
    addTool(name) {
      added.push(name);
      for (const { server } of sessions.values()) {
        server.registerTool(name, { description: `Added later: ${name}`, annotations: { readOnlyHint: true } }, async () => {
          calls.push(name);
          return { content: [{ type: 'text', text: name }] };
        });
      }
    },
    announceToolsChanged() {
      for (const { server } of sessions.values()) server.sendToolListChanged();
      return sessions.size;
    },
    async close() {
      for (const { server } of sessions.values()) await server.close().catch(() => {});
      httpServer.closeAllConnections();
      await new Promise<void>((resolve) => httpServer.close(() => resolve()));
    },
  };
}

async function readJson(req: http.IncomingMessage): Promise<{ method?: string; params?: { name?: string } }> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

/**
 * A legacy upstream (the 2024-11-05 HTTP+SSE transport, the SDK's SSEServerTransport): GET /sse opens
 * the stream, POST /messages?sessionId= carries requests; a POST to /sse is refused (405) as such a
 * server does, which is how a client learns to fall back.
 */
export async function startLegacyUpstream(): Promise<{ url: string; calls: string[]; close(): Promise<void> }> {
  const { SSEServerTransport } = await import('@modelcontextprotocol/sdk/server/sse.js');
  const calls: string[] = [];
  const transports = new Map<string, InstanceType<typeof SSEServerTransport>>();
  const httpServer = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (req.method === 'GET' && url.pathname === '/sse') {
      const server = new McpServer({ name: 'legacy-upstream', version: '1.0.0' });
      server.registerTool('shout', { description: 'Shouts a word', inputSchema: { word: z.string() } }, async ({ word }) => {
        calls.push('shout');
        return { content: [{ type: 'text', text: word.toUpperCase() }] };
      });
      const transport = new SSEServerTransport('/messages', res);
      transports.set(transport.sessionId, transport);
      await server.connect(transport);
      return;
    }
    if (req.method === 'POST' && url.pathname === '/messages') {
      const transport = transports.get(url.searchParams.get('sessionId') ?? '');
      if (!transport) return void res.writeHead(404).end();
      await transport.handlePostMessage(req, res);
      return;
    }
    res.writeHead(405).end();
  });
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  const port = (httpServer.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/sse`,
    calls,
    async close() {
      httpServer.closeAllConnections();
      await new Promise<void>((resolve) => httpServer.close(() => resolve()));
    },
  };
}
