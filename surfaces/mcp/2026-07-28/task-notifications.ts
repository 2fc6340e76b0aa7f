import {
  CLIENT_CAPABILITIES_META_KEY,
  type ClientCapabilities,
  classifyInboundRequest,
  type Implementation,
  SERVER_INFO_META_KEY,
  SUBSCRIPTION_ID_META_KEY,
} from '@modelcontextprotocol/server';
import type { Request, Response } from 'express';
import type { Caller } from '../../../core/caller.js';
import type { ServiceContext } from '../../../features/context.js';
import { inSlot, tenantFull } from '../../../features/wait-slots.js';
import type { TaskService, TaskView } from '../tasks/task-service.js';
import { declaresTasks, detailedTask, tasksNotDeclared } from './tasks-extension.js';

/**
 * Task status notifications of the Tasks extension (2026-07-28): a `subscriptions/listen` whose
 * filter names `taskIds` gets a stream that acknowledges the caller's own tasks among them (another
 * user's id, like an unknown one, is simply not acknowledged), then sends `notifications/tasks` —
 * the task as tasks/get shows it — at each status change, and ends with the listen result once
 * every acknowledged task has ended. The v2 SDK's listen router knows only its four list/resource
 * filters and drops `taskIds`, so these subscriptions are answered here, in the SSE framing the
 * SDK's router uses; every other subscriptions/listen is left to the SDK.
 */

/** At most this many task ids per subscription; more are not acknowledged. */
const MAX_TASKS_PER_SUBSCRIPTION = 50;
/** Task subscriptions one user may hold open at once, per process (each reads its tasks' state as they poll). */
const MAX_TASK_SUBSCRIPTIONS_PER_USER = 5;
const KEEP_ALIVE_MS = 15_000;

interface ListenRequest {
  id: string | number;
  params: { notifications: { taskIds: unknown[] }; _meta?: Record<string, unknown> };
}

/** A well-formed 2026-07-28 subscriptions/listen asking for task ids (the SDK answers anything malformed itself). */
function isTaskListen(req: Request): boolean {
  const body = req.body as { method?: unknown; params?: { notifications?: { taskIds?: unknown } } } | undefined;
  if (body?.method !== 'subscriptions/listen' || !Array.isArray(body.params?.notifications?.taskIds)) return false;
  const outcome = classifyInboundRequest({
    httpMethod: req.method,
    body,
    protocolVersionHeader: req.get('mcp-protocol-version'),
    mcpMethodHeader: req.get('mcp-method'),
    mcpNameHeader: req.get('mcp-name'),
  });
  return outcome.kind === 'modern' && outcome.messageKind === 'request' && req.get('mcp-method') === 'subscriptions/listen';
}

export function serveTaskNotifications(
  ctx: ServiceContext,
  tasks: TaskService,
  serverInfo: Implementation,
  toolResult: (body: unknown, isError: boolean) => Record<string, unknown>,
) {
  /** The acknowledged tasks' changes until they have all ended or the client leaves, then the listen result. */
  async function stream(res: Response, caller: Caller, message: ListenRequest): Promise<void> {
    const asked = [
      ...new Set(message.params.notifications.taskIds.filter((id): id is string => typeof id === 'string' && id.length <= 200)),
    ];
    const views = await Promise.all(asked.slice(0, MAX_TASKS_PER_SUBSCRIPTION).map((id) => tasks.get(caller, id)));
    const honored = views.filter((v): v is TaskView => v !== undefined);

    const stop = new AbortController();
    res.on('close', () => stop.abort());
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    const open = () => !stop.signal.aborted && !res.writableEnded;
    const frame = (payload: unknown) => {
      if (open()) res.write(`event: message\ndata: ${JSON.stringify(payload)}\n\n`);
    };
    const stamp = { [SUBSCRIPTION_ID_META_KEY]: message.id };
    frame({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: { notifications: { taskIds: honored.map((v) => v.taskId) }, _meta: stamp },
    });
    const keepAlive = setInterval(() => open() && res.write(': keepalive\n\n'), KEEP_ALIVE_MS);
    const last = new Map<string, string>();
    const send = async (view: TaskView) => {
      const ended = view.status === 'completed' || view.status === 'failed' || view.status === 'cancelled';
      const task = detailedTask(view, ended ? await tasks.outcome(caller, view.taskId) : undefined, toolResult);
      const seen = `${task.status}\0${task.lastUpdatedAt}\0${'result' in task}`;
      if (last.get(view.taskId) === seen) return;
      last.set(view.taskId, seen);
      frame({ jsonrpc: '2.0', method: 'notifications/tasks', params: { ...task, _meta: stamp } });
    };
    try {
      await Promise.all(
        honored.map(async (view) => {
          await send(view);
          await tasks.result(caller, view.taskId, { signal: stop.signal, onStatus: send });
          const final = await tasks.get(caller, view.taskId);
          if (final) await send(final);
        }),
      );
    } catch (err) {
      if (!stop.signal.aborted) ctx.logger.warn({ err: (err as Error).message }, 'task notifications stopped');
    } finally {
      clearInterval(keepAlive);
    }
    // Every acknowledged task has ended: the subscription's graceful end (nothing if the client left).
    frame({
      jsonrpc: '2.0',
      id: message.id,
      result: { resultType: 'complete', _meta: { ...stamp, [SERVER_INFO_META_KEY]: serverInfo } },
    });
    // Whatever still follows a task (one failed read ended the wait of all) stops here.
    stop.abort();
    if (!res.writableEnded) res.end();
  }

  return {
    /** A well-formed 2026-07-28 subscriptions/listen asking for task ids (the SDK answers anything malformed itself). */
    claims: async (req: Request): Promise<boolean> => isTaskListen(req),

    async serve(req: Request, res: Response, caller: Caller): Promise<void> {
      const message = req.body as ListenRequest;
      const capabilities = message.params._meta?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined;
      if (!declaresTasks(capabilities)) {
        const error = tasksNotDeclared();
        res.status(400).json({ jsonrpc: '2.0', id: message.id, error: { code: error.code, message: error.message, data: error.data } });
        return;
      }
      const bounds = { perUser: MAX_TASK_SUBSCRIPTIONS_PER_USER, perTenant: ctx.config.WAITS_MAX_PER_TENANT };
      await inSlot(
        'task-subscription',
        caller,
        bounds,
        // The user's: what the SDK answers when its own subscriptions are exhausted.
        (whose) => {
          const text = whose === 'user' ? 'Subscription limit reached' : tenantFull(ctx.config);
          res.json({ jsonrpc: '2.0', id: message.id, error: { code: -32603, message: text } });
        },
        () => stream(res, caller, message),
      );
    },
  };
}
