import type { CreateTaskOptions, TaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  ErrorCode,
  GetTaskPayloadRequestSchema,
  McpError,
  RELATED_TASK_META_KEY,
  type Result,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import type { Caller } from '../../../core/caller.js';
import { heldWaits, inSlot, tenantFull, type WaitLimits } from '../../../features/wait-slots.js';
import { callToolResult } from '../tool-result.js';
import type { TaskService } from './task-service.js';

/** What the 2025-11-25 `tasks` capability declares: task-augmented tools/call, tasks/list and tasks/cancel. */
export const TASKS_CAPABILITY = { list: {}, cancel: {}, requests: { tools: { call: {} } } };

/** The longest one tasks/result request blocks before the client is asked to call again. */
const RESULT_WAIT_MAX_MS = 10 * 60 * 1000;

const notFound = (taskId: string) => new McpError(ErrorCode.InvalidParams, `Task not found: ${taskId}`);

/**
 * The SDK's task handlers answer a thrown error's message to the client (tasks/list and
 * tasks/cancel inside a sentence of their own): anything but a protocol error is logged here and
 * answered as an internal error, so no database, Temporal or decryption detail reaches the client.
 */
async function hidingInternals<T>(logger: Logger, method: string, answer: () => Promise<T>): Promise<T> {
  try {
    return await answer();
  } catch (err) {
    if (err instanceof McpError) throw err;
    logger.error({ method, err: (err as Error).message }, 'MCP task request failed');
    throw new McpError(ErrorCode.InternalError, 'Internal error; the server logged the details');
  }
}

/**
 * The v1 SDK's TaskStore for one caller, over the durable task service: the SDK's own tasks/get,
 * tasks/list and tasks/cancel handlers use it. Tasks are created by the tool handler (which starts
 * the work), never through the store, and their answers come from the work, never stored by the SDK.
 * The SDK's session id is ignored: a task belongs to its user, across sessions and processes.
 */
export class CallerTaskStore implements TaskStore {
  constructor(
    private readonly tasks: TaskService,
    private readonly caller: Caller,
    private readonly logger: Logger,
  ) {}

  async createTask(_params: CreateTaskOptions): Promise<Task> {
    throw new McpError(ErrorCode.InternalError, 'Tasks are created by the tool call itself');
  }

  async getTask(taskId: string): Promise<Task | null> {
    return hidingInternals(this.logger, 'tasks/get', async () => (await this.tasks.get(this.caller, taskId)) ?? null);
  }

  async storeTaskResult(): Promise<void> {
    throw new McpError(ErrorCode.InternalError, "A task's answer comes from its work");
  }

  async getTaskResult(taskId: string): Promise<Result> {
    return hidingInternals(this.logger, 'tasks/result', async () => {
      const outcome = await this.tasks.result(this.caller, taskId, { signal: AbortSignal.timeout(RESULT_WAIT_MAX_MS) });
      if (!outcome) throw notFound(taskId);
      return callToolResult(outcome.body, outcome.isError);
    });
  }

  async updateTaskStatus(taskId: string, status: Task['status']): Promise<void> {
    // The only change a client may ask for is tasks/cancel.
    if (status !== 'cancelled') throw new McpError(ErrorCode.InvalidRequest, `A task's status is set by its work, not to ${status}`);
    const cancelled = await hidingInternals(this.logger, 'tasks/cancel', () => this.tasks.cancel(this.caller, taskId));
    if (cancelled === 'unknown') throw notFound(taskId);
    if (cancelled === 'terminal') throw new McpError(ErrorCode.InvalidParams, 'Cannot cancel a task that has already ended');
  }

  listTasks(cursor?: string) {
    return hidingInternals(this.logger, 'tasks/list', () => this.tasks.list(this.caller, cursor));
  }
}

/** tasks/result requests one user may have waiting at once in one process (each polls the task's work). */
export const RESULT_WAITS_PER_USER = 20;

/** tasks/result requests of this user waiting in this process now. */
export const waitingTaskResults = (caller: Caller): number => heldWaits('task-result', caller);

/**
 * tasks/result that waits on the durable task (not on this process's memory) and, while it waits
 * on the request's open stream, tells the client of each status change (notifications/tasks/status).
 * It holds one of the user's RESULT_WAITS_PER_USER slots and one of the tenant's (features/wait-slots.ts).
 */
export function serveTaskResults(server: Server, tasks: TaskService, caller: Caller, logger: Logger, limits: WaitLimits): void {
  server.setRequestHandler(GetTaskPayloadRequestSchema, async (request, extra) => {
    const { taskId } = request.params;
    const bounds = { perUser: RESULT_WAITS_PER_USER, perTenant: limits.WAITS_MAX_PER_TENANT };
    const refused = (whose: 'user' | 'tenant'): never => {
      throw new McpError(
        ErrorCode.InvalidRequest,
        whose === 'user'
          ? `At most ${RESULT_WAITS_PER_USER} tasks/result requests may wait at once; poll with tasks/get`
          : tenantFull(limits),
      );
    };
    const signal = AbortSignal.any([extra.signal, AbortSignal.timeout(RESULT_WAIT_MAX_MS)]);
    const outcome = await inSlot('task-result', caller, bounds, refused, () =>
      hidingInternals(logger, 'tasks/result', () =>
        tasks
          .result(caller, taskId, {
            signal,
            onStatus: (task) => extra.sendNotification({ method: 'notifications/tasks/status', params: task }),
          })
          .catch((err) => {
            if (signal.aborted) throw new McpError(ErrorCode.RequestTimeout, 'The task has not ended yet: ask for its result again');
            throw err;
          }),
      ),
    );
    if (!outcome) throw notFound(taskId);
    const result = callToolResult(outcome.body, outcome.isError);
    return { ...result, _meta: { [RELATED_TASK_META_KEY]: { taskId } } };
  });
}
