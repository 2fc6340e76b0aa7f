import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Caller } from '../../../core/caller.js';
import { MetaToolError } from '../../../core/errors.js';
import type { ServiceContext } from '../../../features/context.js';
import type { MetaTool } from '../../../features/meta-tool.js';
import {
  cancelMcpTask,
  createMcpTask,
  findMcpTask,
  finishMcpTask,
  grantedTtlMs,
  listMcpTasks,
  MCP_TASKS_PAGE,
  MCP_TASKS_PER_USER,
  MCP_TASKS_WORKING_PER_USER,
  type McpTaskRow,
  openMcpTaskArguments,
  readMcpTaskOutcome,
  setMcpTaskWorkflow,
} from '../store/mcp-tasks.js';
import { TASK_KINDS, type TaskKind, type TaskRun, taskKindKey } from './task-kinds.js';
import type { TaskOutcome, TaskService, TaskView } from './task-service.js';

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

/**
 * Tasks whose state lives in Postgres (the row: owner, tool, sealed arguments and answer) and in
 * Temporal (the work: a tool batch, a connection attempt's or an approval's workflow), so any
 * process answers for any task, after any restart. The process that starts a task also records
 * its answer the moment the work ends; every read checks the work itself while the row says
 * nothing yet (the starting process may be gone).
 */
export function durableTasks(ctx: ServiceContext): TaskService {
  const refreshed = (caller: Caller, taskId: string) => refreshedTask(ctx, caller, taskId);
  const service: TaskService = {
    taskSupport: (toolName) => ([...TASK_KINDS.values()].some((k) => k.tool.name === toolName) ? 'optional' : 'forbidden'),

    async create(caller: Caller, tool: MetaTool, args: Record<string, unknown>, options: { ttlMs?: number } = {}) {
      const key = taskKindKey(tool);
      if (!key) throw new MetaToolError({ error: `${tool.name} cannot run as a task` }, 400);
      const kind = TASK_KINDS.get(key)!;
      // A call without a requestId gets one of the task's own: collecting it later reads that batch only.
      const prepared = kind.prepare(args, `mcp-task:${randomBytes(18).toString('base64url')}`);
      const { taskId, row } = await recordTask(ctx, caller, key, kind, prepared, grantedTtlMs(options.ttlMs));
      const onWorkflow = (workflowId: string) => setMcpTaskWorkflow(ctx.pool, row, workflowId);
      await startTaskWork(ctx, { ctx, caller, row, args: prepared, onWorkflow }, key, kind);
      return viewOf(taskId, (await refreshed(caller, taskId)) ?? row);
    },

    async get(caller, taskId) {
      const row = await refreshed(caller, taskId);
      return row && viewOf(taskId, row);
    },

    async outcome(caller, taskId) {
      const row = await refreshed(caller, taskId);
      if (!row?.hasOutcome) return undefined;
      return (await readMcpTaskOutcome(ctx.pool, ctx.keyring, row)) as TaskOutcome | undefined;
    },

    async result(caller, taskId, { signal, onStatus }) {
      let last: string | undefined;
      for (;;) {
        const row = await refreshed(caller, taskId);
        if (!row) return undefined;
        const status = `${row.status}:${row.statusMessage ?? ''}`;
        if (last !== undefined && status !== last) await onStatus?.(viewOf(taskId, row));
        last = status;
        if (row.hasOutcome) return (await readMcpTaskOutcome(ctx.pool, ctx.keyring, row)) as TaskOutcome;
        // A cancelled batch's calls already sent still report: poll until they have.
        await sleep(row.pollIntervalMs, undefined, { signal });
      }
    },

    async cancel(caller, taskId) {
      const row = await findMcpTask(ctx.pool, caller, taskId);
      if (!row) return 'unknown';
      if (TERMINAL.has(row.status) || row.hasOutcome) return 'terminal';
      const cancelled = await cancelMcpTask(ctx.pool, row, 'Cancelled by the client.');
      if (!cancelled) return 'terminal';
      // The batch recorded by the moment of cancelling (none yet: its recorder stops it).
      await kindOf(row).cancel(await runOf(ctx, caller, { ...row, workflowId: cancelled.workflowId }));
      const after = await refreshed(caller, taskId);
      return after ? viewOf(taskId, after) : 'unknown';
    },

    async list(caller, cursor) {
      const after = cursor ? Buffer.from(cursor, 'base64url') : undefined;
      if (after && after.length !== 32) return { tasks: [] };
      const rows = await listMcpTasks(ctx.pool, ctx.keyring, caller, after);
      const page = rows.slice(0, MCP_TASKS_PAGE);
      // As last recorded: a listed task's work is read again when the client asks for that task.
      return {
        tasks: page.map((row) => viewOf(row.taskId, row)),
        ...(rows.length > MCP_TASKS_PAGE && { nextCursor: page[page.length - 1].idHash.toString('base64url') }),
      };
    },
  };
  return service;
}

/** A stored task's kind: rows are only ever written for a known kind. */
const kindOf = (row: McpTaskRow): TaskKind => TASK_KINDS.get(row.tool)!;

/** What a kind needs to probe or cancel a stored task's work, its arguments opened again. */
async function runOf(ctx: ServiceContext, caller: Caller, row: McpTaskRow): Promise<TaskRun> {
  return { ctx, caller, row, args: await openMcpTaskArguments(ctx.pool, ctx.keyring, row) };
}

/** The row once more, with the work's outcome recorded if it has ended since. */
async function refreshedTask(ctx: ServiceContext, caller: Caller, taskId: string): Promise<McpTaskRow | undefined> {
  const row = await findMcpTask(ctx.pool, caller, taskId);
  if (!row || row.hasOutcome) return row;
  const kind = kindOf(row);
  const outcome =
    row.status === 'cancelled' && kind.cancelledOutcome ? kind.cancelledOutcome : await kind.probe(await runOf(ctx, caller, row));
  if (!outcome) return row;
  await finishMcpTask(ctx.pool, ctx.keyring, row, outcome);
  return findMcpTask(ctx.pool, caller, taskId);
}

/** The task's row, written before any work starts so that every process can answer for it; refused over the per-user caps. */
async function recordTask(
  ctx: ServiceContext,
  caller: Caller,
  key: string,
  kind: TaskKind,
  prepared: Record<string, unknown>,
  ttlMs: number,
) {
  const created = await createMcpTask(ctx.pool, ctx.keyring, caller, {
    tool: key,
    arguments: prepared,
    ttlMs,
    pollIntervalMs: kind.pollIntervalMs,
  });
  if (!created) {
    throw new MetaToolError(
      {
        error:
          `Too many tasks: at most ${MCP_TASKS_WORKING_PER_USER} unfinished and ${MCP_TASKS_PER_USER} kept per user ` +
          '(a task is kept until its TTL): wait for some to end, or cancel them.',
      },
      429,
    );
  }
  return created;
}

/**
 * Starts the task's work and waits only until it is durable (or already answered), so the client
 * gets its task at once; a start that fails is recorded as the task's outcome.
 */
async function startTaskWork(ctx: ServiceContext, run: TaskRun, key: string, kind: TaskKind): Promise<void> {
  const { durable, ended } = kind.start(run);
  // Recorded here when this process sees the end; otherwise by the next read.
  const recorded = ended
    .then(async (outcome) => {
      if (outcome) await finishMcpTask(ctx.pool, ctx.keyring, run.row, outcome);
    })
    .catch((err) => ctx.logger.warn({ tool: key, err: (err as Error).message }, 'task outcome not recorded; the next read records it'));
  try {
    // A call that answered before any work existed outside this process (bad arguments, a call
    // routed to a remote source) is answered from its recorded outcome, never by running it again.
    await Promise.race([durable, recorded]);
  } catch (err) {
    ctx.logger.error({ tool: key, err: (err as Error).message }, 'task could not be started');
    await finishMcpTask(ctx.pool, ctx.keyring, run.row, { body: { error: 'The task could not be started; try again.' }, isError: true });
  }
}

function viewOf(taskId: string, row: McpTaskRow): TaskView {
  return {
    taskId,
    status: row.status,
    ...(row.statusMessage && { statusMessage: row.statusMessage }),
    createdAt: row.createdAt.toISOString(),
    lastUpdatedAt: row.updatedAt.toISOString(),
    ttl: row.expiresAt.getTime() - row.createdAt.getTime(),
    pollInterval: row.pollIntervalMs,
  };
}
