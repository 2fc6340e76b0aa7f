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
import type { Caller } from '../../core/caller.js';
import { callToolResult } from '../mcp-tool-result.js';
import type { TaskService } from './task-service.js';

/** What the 2025-11-25 `tasks` capability declares: task-augmented tools/call, tasks/list and tasks/cancel. */
export const TASKS_CAPABILITY = { list: {}, cancel: {}, requests: { tools: { call: {} } } };

/** The longest one tasks/result request blocks before the client is asked to call again. */
const RESULT_WAIT_MAX_MS = 10 * 60 * 1000;

const notFound = (taskId: string) => new McpError(ErrorCode.InvalidParams, `Task not found: ${taskId}`);

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
  ) {}

  async createTask(_params: CreateTaskOptions): Promise<Task> {
    throw new McpError(ErrorCode.InternalError, 'Tasks are created by the tool call itself');
  }

  async getTask(taskId: string): Promise<Task | null> {
    return (await this.tasks.get(this.caller, taskId)) ?? null;
  }

  async storeTaskResult(): Promise<void> {
    throw new McpError(ErrorCode.InternalError, "A task's answer comes from its work");
  }

  async getTaskResult(taskId: string): Promise<Result> {
    const outcome = await this.tasks.result(this.caller, taskId, { signal: AbortSignal.timeout(RESULT_WAIT_MAX_MS) });
    if (!outcome) throw notFound(taskId);
    return callToolResult(outcome.body, outcome.isError);
  }

  async updateTaskStatus(taskId: string, status: Task['status']): Promise<void> {
    // The only change a client may ask for is tasks/cancel.
    if (status !== 'cancelled') throw new McpError(ErrorCode.InvalidRequest, `A task's status is set by its work, not to ${status}`);
    const cancelled = await this.tasks.cancel(this.caller, taskId);
    if (cancelled === 'unknown') throw notFound(taskId);
    if (cancelled === 'terminal') throw new McpError(ErrorCode.InvalidParams, 'Cannot cancel a task that has already ended');
  }

  listTasks(cursor?: string) {
    return this.tasks.list(this.caller, cursor);
  }
}

/**
 * tasks/result that waits on the durable task (not on this process's memory) and, while it waits
 * on the request's open stream, tells the client of each status change (notifications/tasks/status).
 */
export function serveTaskResults(server: Server, tasks: TaskService, caller: Caller): void {
  server.setRequestHandler(GetTaskPayloadRequestSchema, async (request, extra) => {
    const { taskId } = request.params;
    const signal = AbortSignal.any([extra.signal, AbortSignal.timeout(RESULT_WAIT_MAX_MS)]);
    const outcome = await tasks
      .result(caller, taskId, {
        signal,
        onStatus: (task) => extra.sendNotification({ method: 'notifications/tasks/status', params: task }),
      })
      .catch((err) => {
        if (signal.aborted) throw new McpError(ErrorCode.RequestTimeout, 'The task has not ended yet: ask for its result again');
        throw err;
      });
    if (!outcome) throw notFound(taskId);
    const result = callToolResult(outcome.body, outcome.isError);
    return { ...result, _meta: { [RELATED_TASK_META_KEY]: { taskId } } };
  });
}
