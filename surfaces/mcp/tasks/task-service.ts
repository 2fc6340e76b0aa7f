import type { Caller } from '../../../core/caller.js';
import type { MetaTool } from '../../../features/meta-tool.js';

/**
 * MCP Tasks over Switchboard's durable state: what both protocol surfaces (the 2025-11-25
 * `tasks` utility through the v1 SDK's TaskStore, and the 2026-07-28 `io.modelcontextprotocol/tasks`
 * extension) ask of a task. A task is the caller's own: another user's id answers exactly like an
 * unknown one, everywhere.
 */

type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** A task as the protocol shows it (the MCP `Task` object). */
export interface TaskView {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  /** ISO 8601. */
  createdAt: string;
  lastUpdatedAt: string;
  /** Milliseconds the task and its result are kept after creation (the granted TTL, never null here). */
  ttl: number;
  /** Milliseconds a client should leave between polls. */
  pollInterval: number;
}

/** A finished task's answer: the same body (and error flag) the call would have answered directly. */
export interface TaskOutcome {
  body: unknown;
  isError: boolean;
}

/** Whether a tool may run as a task (`execution.taskSupport` in tools/list). */
type TaskSupport = 'optional' | 'forbidden';

export interface TaskService {
  /** `optional` for the tools whose work is durable (calls, waits); `forbidden` for the quick ones. */
  taskSupport(toolName: string): TaskSupport;
  /**
   * Starts the call's durable work and records the task before answering (the workflow exists by
   * then). Arguments the tool refuses throw the tool's MetaToolError, as a direct call would.
   */
  create(caller: Caller, tool: MetaTool, args: Record<string, unknown>, options?: { ttlMs?: number }): Promise<TaskView>;
  /** The task now (its status read from the workflow or row behind it); undefined when unknown or not the caller's. */
  get(caller: Caller, taskId: string): Promise<TaskView | undefined>;
  /** The outcome if the task has ended (without waiting); undefined while it works, or when unknown. */
  outcome(caller: Caller, taskId: string): Promise<TaskOutcome | undefined>;
  /**
   * Waits until the task ends (or `signal` aborts) and answers its outcome; `onStatus` hears each
   * status change seen while waiting. Undefined when unknown or not the caller's.
   */
  result(
    caller: Caller,
    taskId: string,
    options: { signal: AbortSignal; onStatus?: (task: TaskView) => void | Promise<void> },
  ): Promise<TaskOutcome | undefined>;
  /**
   * Cancels the task's work: a call not yet sent is not sent, one already sent reports its real
   * outcome. `unknown` for an unknown or another user's id; `terminal` when it had already ended.
   */
  cancel(caller: Caller, taskId: string): Promise<TaskView | 'unknown' | 'terminal'>;
  /** The caller's live tasks, newest first, a page at a time. */
  list(caller: Caller, cursor?: string): Promise<{ tasks: TaskView[]; nextCursor?: string }>;
}
