import { toNodeHandler } from '@modelcontextprotocol/node';
import {
  type CallToolResult,
  type ClientCapabilities,
  createMcpHandler,
  inputRequired,
  isLegacyRequest,
  type JSONRPCRequest,
  PROTOCOL_VERSION_META_KEY,
  ProtocolError,
  type Result,
  Server,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { Request, Response } from 'express';
import type { Caller } from '../../../core/caller.js';
import { MetaToolError } from '../../../core/errors.js';
import { nestsDeeperThan } from '../../../core/json-depth.js';
import { inputJsonSchema } from '../../../core/json-schema.js';
import type { ServiceContext } from '../../../features/context.js';
import { type MetaTool, runMetaTool } from '../../../features/meta-tool.js';
import pkg from '../../../package.json' with { type: 'json' };
import { RequestProgress } from '../2025-11-25/connect-elicitation.js';
import type { TaskService } from '../tasks/task-service.js';
import { callToolResult } from '../tool-result.js';
import { callRound, mayNeedPerson } from './input-required.js';
import { malformedInputResponses } from './input-responses.js';
import { authInfoFor, callerOf, type FlowState, type RequestStateSeal, requestStateSeal } from './request-state.js';
import { serveTaskNotifications } from './task-notifications.js';
import { createTaskResult, declaredCapabilities, declaresTasks, serveTasksExtension, TASKS_EXTENSION } from './tasks-extension.js';

/**
 * MCP revision 2026-07-28 on the same URLs as the 2025 revisions (surfaces/mcp/endpoint.ts dispatches), served
 * by the official v2 SDK (@modelcontextprotocol/server, with @modelcontextprotocol/node between it
 * and Express): stateless, `server/discover` instead of `initialize`, the client's capabilities in
 * each request's `_meta`. The same tools and bodies as the 2025 surface (runMetaTool), the same
 * caller (the bearer key, authenticated before this), the same Host/Origin guard and body limit
 * (they run ahead of the dispatch). Where a call needs a person, an `input_required` result
 * (mcp-input-required.ts); for clients that declare the Tasks extension, long calls as tasks
 * (mcp-tasks-extension.ts).
 */

const MODERN_PROTOCOL_REVISION = '2026-07-28';
const SERVER_INFO = { name: pkg.name, version: pkg.version };

/** Deeper bodies are not walked by the classification, and refused on the 2026-07-28 path (the SDK walks them recursively). */
const MAX_BODY_NESTING = 200;

/**
 * Whether a POST is for the 2026-07-28 revision, decided by the v2 SDK's own classification (the
 * request's `_meta` envelope claim, its protocol headers) of the body express.json parsed. A body
 * it did not parse (not JSON) is left to the 2025 transport, which answers it as it always has;
 * so is a body nested too deep to walk safely, unless it plainly claims the 2026 revision.
 */
export async function isModernRequest(req: Request): Promise<boolean> {
  if (req.body === undefined) return false;
  if (nestsDeeperThan(req.body, MAX_BODY_NESTING)) {
    const meta = (req.body as { params?: { _meta?: Record<string, unknown> } }).params?._meta;
    return (
      (meta !== null && typeof meta === 'object' && PROTOCOL_VERSION_META_KEY in meta) ||
      req.get('mcp-protocol-version') === MODERN_PROTOCOL_REVISION
    );
  }
  // The classification reads the method, three headers and the parsed body: nothing is serialized again.
  const headers = new Headers();
  for (const name of ['mcp-protocol-version', 'mcp-method', 'mcp-name']) {
    const value = req.get(name);
    if (value !== undefined) headers.set(name, value);
  }
  const probe = new globalThis.Request('http://switchboard.invalid/mcp', { method: 'POST', headers });
  return !(await isLegacyRequest(probe, req.body));
}

const declaresUrlElicitation = (capabilities: ClientCapabilities | undefined) =>
  Boolean((capabilities?.elicitation as { url?: unknown } | undefined)?.url);

/**
 * The SDK's Server, except that a CreateTaskResult keeps its shape: the SDK (2.4.0) reads a
 * tools/call result without `content` as a content-less CallToolResult and adds `content: []`,
 * which a task handle must not carry.
 */
class ModernServer extends Server {
  protected override _wrapHandler(method: string, handler: (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>) {
    const wrapped = super._wrapHandler(method, handler);
    if (method !== 'tools/call') return wrapped;
    return async (request: JSONRPCRequest, sctx: ServerContext): Promise<Result> => {
      const result = await wrapped(request, sctx);
      if (result.resultType !== 'task') return result;
      const { content: _added, ...task } = result as Result & { content?: unknown };
      return task;
    };
  }
}

interface Surface {
  tools: readonly MetaTool[];
  byName: Map<string, MetaTool>;
  listed: { name: string; description: string; inputSchema: { type: 'object' } }[];
}

function modernServerFor(ctx: ServiceContext, caller: Caller, surface: Surface, seal: RequestStateSeal, tasks: TaskService | undefined) {
  // logging: declared as on the 2025 surface (deprecated by 2026-07-28, still served); extensions: Tasks, when tasks are served.
  const server = new ModernServer(SERVER_INFO, {
    capabilities: { tools: {}, logging: {}, ...(tasks && { extensions: { [TASKS_EXTENSION]: {} } }) },
    requestState: { verify: seal.verify },
  });
  server.setRequestHandler('tools/list', async () => ({ tools: surface.listed }));
  server.setRequestHandler('tools/call', async (request, sctx) => {
    const tool = surface.byName.get(request.params.name);
    if (!tool) return callToolResult({ error: `No tool named ${request.params.name}` }, true);
    const args = request.params.arguments ?? {};
    const capabilities = declaredCapabilities(sctx);
    const progressToken = request.params._meta?.progressToken;
    // Sent on this request's own response stream, always increasing.
    const reporter =
      progressToken === undefined
        ? undefined
        : new RequestProgress({ sendNotification: (notification) => sctx.mcpReq.notify(notification) }, progressToken);
    try {
      // The server decides (the extension's rule): a durable call or wait becomes a task when the client takes tasks.
      if (tasks && declaresTasks(capabilities) && tasks.taskSupport(tool.name) === 'optional') {
        // The SDK types tools/call answers as CallToolResult | InputRequiredResult; its encoder passes `resultType: "task"` through.
        return createTaskResult(await tasks.create(caller, tool, args)) as unknown as CallToolResult;
      }
      if (!declaresUrlElicitation(capabilities) || !mayNeedPerson(tool)) {
        const progress = reporter && ((done: number, total: number) => reporter.report(done, total, `${done} of ${total} calls finished`));
        return callToolResult(await runMetaTool(tool, ctx, caller, args, { progress }), false);
      }
      const answer = await callRound(ctx, caller, tool, args, {
        state: sctx.mcpReq.requestState<FlowState>(),
        responses: sctx.mcpReq.inputResponses,
        signal: sctx.mcpReq.signal,
        progress: reporter,
      });
      if (answer.kind === 'answer') return callToolResult(answer.body, false);
      const requestState = await seal.mint(answer.state, sctx);
      if (!requestState) throw new Error('the request state outgrew its bound');
      const asks = Object.keys(answer.inputRequests).length > 0;
      return inputRequired({ ...(asks && { inputRequests: answer.inputRequests }), requestState });
    } catch (err) {
      // The same bodies as the JSON API: bad arguments and refusals are tool results, not protocol errors.
      if (err instanceof MetaToolError) return callToolResult(err.body, true);
      if (err instanceof ProtocolError) throw err;
      ctx.logger.error({ tool: tool.name, err: (err as Error).message }, 'MCP tool call failed');
      return callToolResult({ error: 'Internal error; the server logged the details' }, true);
    }
  });
  if (tasks) serveTasksExtension(server, tasks, caller, callToolResult);
  return server;
}

/**
 * The Express handler of one surface (its tools) for 2026-07-28 requests, after authentication:
 * the SDK's per-request handler (a fresh server per request, modern only — 2025 traffic never
 * reaches it), answering over SSE so a long wait carries keep-alive comments as the 2025 surface's does.
 */
export function modernMcp(ctx: ServiceContext, tools: readonly MetaTool[], options: { tasks?: TaskService } = {}) {
  const surface: Surface = {
    tools,
    byName: new Map(tools.map((t) => [t.name, t])),
    listed: tools.map((t) => ({ name: t.name, description: t.description, inputSchema: inputJsonSchema(t) as { type: 'object' } })),
  };
  const seal = requestStateSeal(ctx);
  const reportError = (err: Error) => ctx.logger.info({ err: err.message.slice(0, 300) }, 'MCP 2026-07-28 request refused or failed');
  const handler = createMcpHandler(({ authInfo }) => modernServerFor(ctx, callerOf(authInfo), surface, seal, options.tasks), {
    legacy: 'reject',
    responseMode: 'sse',
    onerror: reportError,
  });
  const serve = toNodeHandler(handler, { onerror: reportError });
  const notifications = options.tasks && serveTaskNotifications(ctx, options.tasks, SERVER_INFO, callToolResult);
  return async (req: Request, res: Response) => {
    const caller = req.caller!;
    if (nestsDeeperThan(req.body, MAX_BODY_NESTING)) {
      res.status(400).json({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: `Invalid Request: the body nests deeper than ${MAX_BODY_NESTING} levels` },
      });
      return;
    }
    const malformed = malformedInputResponses(req.body);
    if (malformed) {
      const { id } = req.body as { id?: unknown };
      res.status(400).json({
        jsonrpc: '2.0',
        id: typeof id === 'string' || typeof id === 'number' ? id : null,
        error: { code: -32602, message: `Invalid params: ${malformed}` },
      });
      return;
    }
    if (notifications && (await notifications.claims(req))) return notifications.serve(req, res, caller);
    // The caller rides to the SDK's handler context as AuthInfo (node's toNodeHandler reads `req.auth`).
    await serve(Object.assign(req, { auth: authInfoFor(caller) }), res, req.body);
  };
}
