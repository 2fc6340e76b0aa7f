import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import express, { type Request, type RequestHandler, type Response, Router } from 'express';
import type { Caller } from '../core/caller.js';
import { MetaToolError } from '../core/errors.js';
import { inputJsonSchema } from '../core/json-schema.js';
import pkg from '../package.json' with { type: 'json' };
import type { ServiceContext } from './context.js';
import { AGENT_MCP_TOOLS, META_TOOLS } from './meta/index.js';
import { type MetaTool, runMetaTool } from './meta/meta-tool.js';

const SERVER_INFO = { name: pkg.name, version: pkg.version };

/** Builds one stateless MCP server for one request, acting as `caller`. */
function mcpServerFor(ctx: ServiceContext, caller: Caller, tools: readonly MetaTool[]): Server {
  const byName = new Map(tools.map((t) => [t.name, t]));
  const listed = tools.map((t) => ({ name: t.name, description: t.description, inputSchema: inputJsonSchema(t) as { type: 'object' } }));
  // logging: clients may set a level (logging/setLevel); tool calls' own log lines stay in the server's log.
  const server = new Server(SERVER_INFO, { capabilities: { tools: {}, logging: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listed }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = byName.get(request.params.name);
    if (!tool) return toolResult({ error: `No tool named ${request.params.name}` }, true);
    const progressToken = request.params._meta?.progressToken;
    // Sent on this request's own response stream (stateless: no session needed), as calls finish.
    const progress =
      progressToken === undefined
        ? undefined
        : (done: number, total: number) =>
            void extra
              .sendNotification({
                method: 'notifications/progress',
                params: { progressToken, progress: done, total, message: `${done} of ${total} calls finished` },
              })
              .catch(() => {});
    try {
      return toolResult(await runMetaTool(tool, ctx, caller, request.params.arguments ?? {}, { progress }), false);
    } catch (err) {
      // The same bodies as the JSON API: bad arguments and refusals are tool results, not protocol errors.
      if (err instanceof MetaToolError) return toolResult(err.body, true);
      ctx.logger.error({ tool: tool.name, err: (err as Error).message }, 'MCP tool call failed');
      return toolResult({ error: 'Internal error; the server logged the details' }, true);
    }
  });
  return server;
}

function toolResult(body: unknown, isError: boolean) {
  return {
    content: [{ type: 'text' as const, text: JSON.stringify(body) }],
    ...(body !== null && typeof body === 'object' && !Array.isArray(body) ? { structuredContent: body as Record<string, unknown> } : {}),
    ...(isError ? { isError: true } : {}),
  };
}

/**
 * Streamable HTTP MCP endpoints: `/mcp` with the meta-tools and `/mcp/agent` with the two
 * agent tools; both with read_result. Stateless (no session): each POST gets its own server bound to the key's caller.
 * Answers stream as SSE with keep-alive comments, so a wait of many minutes outlives idle
 * timeouts between here and the client.
 */
export function mcpRouter(ctx: ServiceContext, authenticate: RequestHandler[]): Router {
  const router = Router();
  const serve = (tools: readonly MetaTool[]) => async (req: Request, res: Response) => {
    const server = mcpServerFor(ctx, req.caller!, tools);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  };
  const notAllowed = (_req: Request, res: Response) => {
    res.status(405).set('Allow', 'POST').json({ error: 'This MCP endpoint is stateless: send JSON-RPC with POST' });
  };
  for (const [path, tools] of [
    ['/mcp', META_TOOLS],
    ['/mcp/agent', AGENT_MCP_TOOLS],
  ] as const) {
    router.post(path, express.json({ limit: '1mb' }), ...authenticate, serve(tools));
    router.get(path, notAllowed);
    router.delete(path, notAllowed);
  }
  return router;
}
