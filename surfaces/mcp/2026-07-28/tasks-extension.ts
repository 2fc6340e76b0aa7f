import {
  CLIENT_CAPABILITIES_META_KEY,
  type ClientCapabilities,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  type Server,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { Caller } from '../../../core/caller.js';
import type { TaskOutcome, TaskService, TaskView } from '../tasks/task-service.js';

/**
 * The Tasks extension of MCP 2026-07-28 (`io.modelcontextprotocol/tasks`, SEP-2663) over
 * Switchboard's durable tasks (surfaces/mcp/tasks: a workflow or row behind each). The v2 SDK
 * (@modelcontextprotocol/server 2.4.0) does not serve this extension yet, so it is built on the
 * SDK's extension points: the capability in `server/discover` (`capabilities.extensions`),
 * `tasks/get`, `tasks/update` and `tasks/cancel` as explicit-schema request handlers (the SDK lets
 * exactly these names through its era gate when registered so), and `resultType: "task"` answers
 * of tools/call (mcp-modern.ts). Status notifications: mcp-task-notifications.ts.
 *
 * A task is its caller's own: another user's task id answers exactly like an unknown one.
 */

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** What the request's own `_meta` envelope says the client can do (2026-07-28 declares it per request). */
export function declaredCapabilities(sctx: ServerContext): ClientCapabilities | undefined {
  return (sctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined;
}

export const declaresTasks = (capabilities: ClientCapabilities | undefined) =>
  Boolean((capabilities as { extensions?: Record<string, unknown> } | undefined)?.extensions?.[TASKS_EXTENSION]);

/** The extension's `-32021` for a client that uses tasks without declaring them. */
export const tasksNotDeclared = () =>
  new MissingRequiredClientCapabilityError({ requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } });

const unknownTask = () => new ProtocolError(ProtocolErrorCode.InvalidParams, 'Failed to retrieve task: Task not found');

/**
 * The extension's Task fields. `input_required` is shown as `working`: that status must carry the
 * requests the client is to answer, and a task here waits on a person in the portal (a connection,
 * an approval), not on the client; its status message says what it waits for.
 */
function taskFields(view: TaskView) {
  return {
    taskId: view.taskId,
    status: view.status === 'input_required' ? ('working' as const) : view.status,
    ...(view.statusMessage !== undefined && { statusMessage: view.statusMessage }),
    createdAt: view.createdAt,
    lastUpdatedAt: view.lastUpdatedAt,
    ttlMs: view.ttl,
    pollIntervalMs: view.pollInterval,
  };
}

/** tools/call's answer when the call runs as a task (CreateTaskResult). */
export const createTaskResult = (view: TaskView) => ({ resultType: 'task' as const, ...taskFields(view) });

/**
 * A task as tasks/get and notifications/tasks show it (DetailedTask). A call that answered —
 * a tool error included — is `completed` with the same CallToolResult the call would have
 * answered: the extension keeps `failed` for JSON-RPC errors, so a task the service reports
 * failed with an answer (2025-11-25's reading of `isError`) is completed here, and one that
 * failed without any answer carries an internal error.
 */
export function detailedTask(
  view: TaskView,
  outcome: TaskOutcome | undefined,
  toolResult: (body: unknown, isError: boolean) => Record<string, unknown>,
) {
  const fields = taskFields(view);
  if (fields.status === 'completed' || (fields.status === 'failed' && outcome)) {
    // Its outcome not readable yet (recorded a moment later): still working, as far as a poll can tell.
    if (!outcome) return { ...fields, status: 'working' as const };
    return { ...fields, status: 'completed' as const, result: toolResult(outcome.body, outcome.isError) };
  }
  if (fields.status === 'failed') {
    return { ...fields, error: { code: ProtocolErrorCode.InternalError, message: view.statusMessage ?? 'The task failed' } };
  }
  return fields;
}

const taskParams = z.object({ taskId: z.string().min(1).max(200) });

/** tasks/get, tasks/update and tasks/cancel, for `caller`'s tasks only. */
export function serveTasksExtension(
  server: Server,
  tasks: TaskService,
  caller: Caller,
  toolResult: (body: unknown, isError: boolean) => Record<string, unknown>,
): void {
  const declared = (sctx: ServerContext) => {
    if (!declaresTasks(declaredCapabilities(sctx))) throw tasksNotDeclared();
  };
  server.setRequestHandler('tasks/get', { params: taskParams }, async ({ taskId }, sctx) => {
    declared(sctx);
    const view = await tasks.get(caller, taskId);
    if (!view) throw unknownTask();
    const ended = view.status === 'completed' || view.status === 'failed' || view.status === 'cancelled';
    return detailedTask(view, ended ? await tasks.outcome(caller, taskId) : undefined, toolResult);
  });
  // The SDK lifts `inputResponses` out of the params (it is the multi round-trip field): a task here
  // never asks the client for input, so there is nothing outstanding to answer, and the spec says
  // to ignore responses to keys that are not outstanding. The acknowledgement still needs a known task.
  server.setRequestHandler('tasks/update', { params: taskParams }, async ({ taskId }, sctx) => {
    declared(sctx);
    if (!(await tasks.get(caller, taskId))) throw unknownTask();
    return {};
  });
  // Cooperative: acknowledged at once; the task reaches `cancelled`, or the outcome of a call
  // already sent (its real outcome, never a made-up cancellation).
  server.setRequestHandler('tasks/cancel', { params: taskParams }, async ({ taskId }, sctx) => {
    declared(sctx);
    if ((await tasks.cancel(caller, taskId)) === 'unknown') throw unknownTask();
    return {};
  });
}
