import { randomInt } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type ServerNotification,
} from '@modelcontextprotocol/sdk/types.js';
import express, { type Request, type RequestHandler, type Response, Router } from 'express';
import type { Caller } from '../../core/caller.js';
import { MetaToolError } from '../../core/errors.js';
import { inputJsonSchema } from '../../core/json-schema.js';
import type { ServiceContext } from '../../features/context.js';
import { type MetaTool, runMetaTool } from '../../features/meta-tool.js';
import { AGENT_MCP_TOOLS, META_TOOLS } from '../../features/meta-tools.js';
import pkg from '../../package.json' with { type: 'json' };
import { JSON_BODY_LIMIT } from '../http/body-limits.js';
import { RequestProgress } from './2025-11-25/connect-elicitation.js';
import { answerWithElicitation } from './2025-11-25/url-elicitation.js';
import { isModernRequest, modernMcp } from './2026-07-28/server.js';
import { answerStatelessMcp } from './stateless-transport.js';
import { closeMcpSession, findMcpSession, type McpSession, openMcpSession } from './store/mcp-sessions.js';
import { durableTasks } from './tasks/durable-tasks.js';
import { CallerTaskStore, serveTaskResults, TASKS_CAPABILITY } from './tasks/mcp-task-store.js';
import type { TaskService } from './tasks/task-service.js';
import { callToolResult } from './tool-result.js';

const SERVER_INFO = { name: pkg.name, version: pkg.version };

/**
 * The SDK's Server, answering its capability checks from the session's record: a per-request
 * server never saw the session's `initialize`, but may still notify what the client declared then.
 */
class SessionServer extends Server {
  constructor(
    private readonly session: McpSession | undefined,
    ...args: ConstructorParameters<typeof Server>
  ) {
    super(...args);
    // Each request gets a Server of its own, whose request ids would all start at 0: a session's
    // server-to-client requests (elicitation/create) must not reuse ids, so this one starts anywhere.
    (this as unknown as { _requestMessageId: number })._requestMessageId = randomInt(2 ** 40);
  }

  protected override assertNotificationCapability(method: ServerNotification['method']): void {
    if (method === 'notifications/elicitation/complete') {
      const elicitation = this.session?.capabilities.elicitation as { url?: unknown } | undefined;
      if (!elicitation?.url) throw new Error('the client did not declare URL elicitation');
      return;
    }
    super.assertNotificationCapability(method);
  }
}

const declaresUrlElicitation = (session: McpSession | undefined) =>
  Boolean((session?.capabilities.elicitation as { url?: unknown } | undefined)?.url);

/** Builds one MCP server for one request, acting as `caller` (with its session's record, if any). */
function mcpServerFor(ctx: ServiceContext, caller: Caller, tools: readonly MetaTool[], tasks: TaskService, session?: McpSession): Server {
  const byName = new Map(tools.map((t) => [t.name, t]));
  const listed = tools.map((t) => ({
    name: t.name,
    description: t.description,
    inputSchema: inputJsonSchema(t) as { type: 'object' },
    // Calls and waits may run as tasks (durable: a workflow behind each); the quick tools answer directly.
    execution: { taskSupport: tasks.taskSupport(t.name) },
  }));
  // logging: clients may set a level (logging/setLevel); tool calls' own log lines stay in the server's log.
  const server = new SessionServer(session, SERVER_INFO, {
    capabilities: { tools: {}, logging: {}, tasks: TASKS_CAPABILITY },
    taskStore: new CallerTaskStore(tasks, caller, ctx.logger),
  });
  serveTaskResults(server, tasks, caller, ctx.logger, ctx.config);
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listed }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = byName.get(request.params.name);
    if (request.params.task) {
      // Unknown tools and quick ones cannot run as tasks (-32601, as the spec says for taskSupport "forbidden").
      if (!tool || tasks.taskSupport(tool.name) === 'forbidden') {
        throw new McpError(ErrorCode.MethodNotFound, `${request.params.name} cannot run as a task`);
      }
      return { task: await createTask(ctx, tasks, caller, tool, request.params.arguments ?? {}, request.params.task.ttl) };
    }
    if (!tool) return callToolResult({ error: `No tool named ${request.params.name}` }, true);
    const progressToken = request.params._meta?.progressToken;
    // Sent on this request's own response stream (stateless: no session needed), always increasing.
    const reporter = progressToken === undefined ? undefined : new RequestProgress(extra, progressToken);
    const progress = reporter && ((done: number, total: number) => reporter.report(done, total, `${done} of ${total} calls finished`));
    try {
      const args = request.params.arguments ?? {};
      const body = await runMetaTool(tool, ctx, caller, args, { progress });
      if (!declaresUrlElicitation(session)) return callToolResult(body, false);
      // The client can show a URL: what the answer still needs a human for is asked that way.
      return callToolResult(await answerWithElicitation(ctx, caller, tool, args, body, extra, reporter), false);
    } catch (err) {
      // The same bodies as the JSON API: bad arguments and refusals are tool results, not protocol errors.
      if (err instanceof MetaToolError) return callToolResult(err.body, true);
      // A protocol answer on purpose (URLElicitationRequiredError): the client sees it as sent.
      if (err instanceof McpError) throw err;
      ctx.logger.error({ tool: tool.name, err: (err as Error).message }, 'MCP tool call failed');
      return callToolResult({ error: 'Internal error; the server logged the details' }, true);
    }
  });
  return server;
}

/** A task for the call; a refusal to make one (too many unfinished) is a protocol error, as no task exists. */
async function createTask(
  ctx: ServiceContext,
  tasks: TaskService,
  caller: Caller,
  tool: MetaTool,
  args: Record<string, unknown>,
  ttlMs: number | undefined,
) {
  try {
    return await tasks.create(caller, tool, args, { ttlMs });
  } catch (err) {
    if (err instanceof MetaToolError) throw new McpError(ErrorCode.InvalidRequest, String((err.body as { error?: unknown }).error));
    ctx.logger.error({ tool: tool.name, err: (err as Error).message }, 'MCP task could not be created');
    throw new McpError(ErrorCode.InternalError, 'Internal error; the server logged the details');
  }
}

/**
 * Streamable HTTP MCP endpoints: `/mcp` with the meta-tools and `/mcp/agent` with the two
 * agent tools; both with read_result. Every current revision on one URL: a 2026-07-28 request
 * (the v2 SDK's classification: its `_meta` envelope) goes to the v2 SDK's server
 * (surfaces/mcp/2026-07-28/server.ts); 2025-06-18 and 2025-11-25 requests to the v1 SDK's, below.
 * Stateless (no session): each POST gets its own server bound to the key's caller.
 * Answers stream as SSE with keep-alive comments, so a wait of many minutes outlives idle
 * timeouts between here and the client.
 */
export function mcpRouter(ctx: ServiceContext, authenticate: RequestHandler[]): Router {
  const router = Router();
  const tasks = durableTasks(ctx);
  const serve = (tools: readonly MetaTool[]) => async (req: Request, res: Response) => {
    const caller = req.caller!;
    const sessionId = req.get('mcp-session-id');
    let session: McpSession | undefined;
    const initialize = initializeParams(req.body);
    if (initialize) {
      // A 2025-revision client: remember what it can do, under an id any process can look up.
      res.setHeader('mcp-session-id', await openMcpSession(ctx.pool, caller, initialize));
    } else if (sessionId) {
      session = await findMcpSession(ctx.pool, sessionId, caller);
      // Unknown, expired or another user's: the same answer, and the client initializes again (spec).
      if (!session) return res.status(404).json({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null });
    }
    const server = mcpServerFor(ctx, caller, tools, tasks, session);
    await answerStatelessMcp(server, req, res);
  };
  const notAllowed = (_req: Request, res: Response) => {
    res.status(405).set('Allow', 'POST, DELETE').json({ error: 'This MCP endpoint offers no stream of its own: send JSON-RPC with POST' });
  };
  // DELETE with a session id ends that session (the caller's own only).
  const endSession = async (req: Request, res: Response) => {
    const sessionId = req.get('mcp-session-id');
    if (!sessionId) return res.status(400).json({ error: 'DELETE ends a session: send its Mcp-Session-Id' });
    res.status((await closeMcpSession(ctx.pool, sessionId, req.caller!)) ? 200 : 404).end();
  };
  for (const [path, tools] of [
    ['/mcp', META_TOOLS],
    ['/mcp/agent', AGENT_MCP_TOOLS],
  ] as const) {
    const modern = modernMcp(ctx, tools, { tasks });
    const legacy = serve(tools);
    // The same body limit, Host/Origin guard (app-wide, ahead of this) and key for both eras.
    router.post(path, express.json({ limit: JSON_BODY_LIMIT }), ...authenticate, async (req, res) => {
      // JSON-RPC batches left MCP with 2025-06-18; every revision served here sends one message per
      // POST. Refused, so a request's rate-limit count is its message count (a batch held 100).
      if (Array.isArray(req.body)) {
        return res.status(400).json({
          jsonrpc: '2.0',
          error: { code: -32600, message: 'JSON-RPC batches are not accepted (MCP 2025-06-18 and later): send one message per POST' },
          id: null,
        });
      }
      return (await isModernRequest(req)) ? modern(req, res) : legacy(req, res);
    });
    router.get(path, notAllowed);
    router.delete(path, ...authenticate, endSession);
  }
  return router;
}

/** The params of a well-formed `initialize` request (a single message, as the spec requires for it), else undefined. */
function initializeParams(body: unknown): { protocolVersion: string; capabilities: Record<string, unknown> } | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const { method, params } = body as { method?: unknown; params?: { protocolVersion?: unknown; capabilities?: unknown } };
  if (method !== 'initialize' || typeof params?.protocolVersion !== 'string') return undefined;
  const { capabilities } = params;
  if (!capabilities || typeof capabilities !== 'object' || Array.isArray(capabilities)) return undefined;
  return { protocolVersion: params.protocolVersion, capabilities: capabilities as Record<string, unknown> };
}
