import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Request, Response } from 'express';

/**
 * Answers one Streamable HTTP POST with a server made for it alone (stateless: no session, no
 * stream left open), and closes both when the response ends. `json`: answer plain JSON instead of
 * an SSE stream (for servers that never send anything before their answer).
 */
export async function answerStatelessMcp(server: Server | McpServer, req: Request, res: Response, options: { json?: boolean } = {}) {
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, ...(options.json && { enableJsonResponse: true }) });
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, req.body);
}
