import { createHash, randomBytes } from 'node:crypto';
import type { CallerOwner } from '../../../core/caller.js';
import { Keyring } from '../../../platform/database/keyring.js';
import { inTransaction, lockKey, type Queryable } from '../../../platform/database/queryable.js';

/** Kept this long when the client asks for no TTL. */
const MCP_TASK_TTL_DEFAULT_MS = 24 * 60 * 60 * 1000;
/** The longest TTL granted (a wait for a person may last days; its row is small). */
const MCP_TASK_TTL_MAX_MS = 7 * 24 * 60 * 60 * 1000;
/** The shortest: a task must outlive the response that names it. */
const MCP_TASK_TTL_MIN_MS = 60 * 1000;
/** Unfinished tasks one user keeps at most; one more is refused until some end. */
export const MCP_TASKS_WORKING_PER_USER = 100;
/** Live tasks (any status, until their TTL) one user keeps at most: tasks that fail at once are rows too. */
export const MCP_TASKS_PER_USER = 1000;
/** tasks/list pages. */
export const MCP_TASKS_PAGE = 50;

type McpTaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

export interface McpTaskRow {
  idHash: Buffer;
  tenantId: string;
  userId: string;
  tool: string;
  workflowId: string | null;
  status: McpTaskStatus;
  statusMessage: string | null;
  hasOutcome: boolean;
  createdAt: Date;
  updatedAt: Date;
  expiresAt: Date;
  pollIntervalMs: number;
  /** Milliseconds since the task was created, by the database's clock (the one created_at is on). */
  ageMs: number;
}

/** A task's answer as kept: the tool result's body and whether it is an error. */
export interface McpTaskOutcome {
  body: unknown;
  isError: boolean;
}

export const mcpTaskIdHash = (taskId: string) => createHash('sha256').update(taskId).digest();

// The sealed values are bound to the row and its owner: a copied value does not open elsewhere.
// The arguments are bound to the tool too: a row whose tool was changed does not run them as another.
const argumentsAad = (row: { idHash: Buffer; tenantId: string; userId: string; tool: string }) =>
  `mcp-task-arguments:${row.idHash.toString('hex')}:${row.tenantId}:${row.userId}:${row.tool}`;
const idAad = (row: { idHash: Buffer; tenantId: string; userId: string }) =>
  `mcp-task-id:${row.idHash.toString('hex')}:${row.tenantId}:${row.userId}`;
const outcomeAad = (row: { idHash: Buffer; tenantId: string; userId: string }) =>
  `mcp-task-outcome:${row.idHash.toString('hex')}:${row.tenantId}:${row.userId}`;

const COLUMNS = `id_hash AS "idHash", tenant_id AS "tenantId", user_id AS "userId", tool, workflow_id AS "workflowId",
  status, status_message AS "statusMessage", sealed_outcome IS NOT NULL AS "hasOutcome", created_at AS "createdAt",
  updated_at AS "updatedAt", expires_at AS "expiresAt", poll_interval_ms AS "pollIntervalMs",
  (EXTRACT(EPOCH FROM now() - created_at) * 1000)::float8 AS "ageMs"`;

/** Clamps a requested TTL to what is granted. */
export const grantedTtlMs = (requested: number | null | undefined) =>
  Math.min(MCP_TASK_TTL_MAX_MS, Math.max(MCP_TASK_TTL_MIN_MS, Math.round(requested ?? MCP_TASK_TTL_DEFAULT_MS)));

/**
 * Records a new task for `owner`; answers its id (an unguessable bearer value, never stored) and
 * row, or undefined when the owner already has the most unfinished tasks allowed.
 */
export async function createMcpTask(
  db: Queryable,
  keyring: Keyring,
  owner: CallerOwner,
  task: { tool: string; arguments: Record<string, unknown>; ttlMs: number; pollIntervalMs: number },
): Promise<{ taskId: string; row: McpTaskRow } | undefined> {
  const taskId = `tsk_${randomBytes(24).toString('base64url')}`;
  const idHash = mcpTaskIdHash(taskId);
  const key = { idHash, ...owner };
  const sealed = keyring.encrypt(JSON.stringify(task.arguments), argumentsAad({ ...key, tool: task.tool }));
  const rows = await inTransaction(db, async (tx) => {
    // One creator of this user at a time: a count in one statement alone sees none of the rows
    // that concurrent creates are inserting, and each would pass the bound.
    await lockKey(tx, `mcp-tasks:${owner.tenantId}:${owner.userId}`);
    return (
      await tx.query(
        `INSERT INTO mcp_tasks (id_hash, tenant_id, user_id, tool, sealed_id, sealed_arguments, expires_at, poll_interval_ms)
     SELECT $1, $2, $3, $4, $9, $5, now() + make_interval(secs => $6::double precision / 1000), $7
     WHERE (SELECT count(*) FILTER (WHERE status IN ('working', 'input_required')) < $8 AND count(*) < $10
            FROM mcp_tasks WHERE tenant_id = $2 AND user_id = $3 AND expires_at > now())
     RETURNING ${COLUMNS}`,
        [
          idHash,
          owner.tenantId,
          owner.userId,
          task.tool,
          sealed,
          task.ttlMs,
          task.pollIntervalMs,
          MCP_TASKS_WORKING_PER_USER,
          keyring.encrypt(taskId, idAad(key)),
          MCP_TASKS_PER_USER,
        ],
      )
    ).rows;
  });
  return rows[0] ? { taskId, row: rows[0] } : undefined;
}

/** The owner's live task of this id; undefined for an unknown, expired or another user's id (the same answer). */
export async function findMcpTask(db: Queryable, owner: CallerOwner, taskId: string): Promise<McpTaskRow | undefined> {
  const { rows } = await db.query(
    `SELECT ${COLUMNS} FROM mcp_tasks WHERE id_hash = $1 AND tenant_id = $2 AND user_id = $3 AND expires_at > now()`,
    [mcpTaskIdHash(taskId), owner.tenantId, owner.userId],
  );
  return rows[0];
}

/** The task's arguments, opened. */
export async function openMcpTaskArguments(db: Queryable, keyring: Keyring, row: McpTaskRow): Promise<Record<string, unknown>> {
  const { rows } = await db.query('SELECT sealed_arguments FROM mcp_tasks WHERE id_hash = $1', [row.idHash]);
  return JSON.parse(keyring.decrypt(rows[0].sealed_arguments, argumentsAad(row)));
}

/** The task's answer, if kept. */
export async function readMcpTaskOutcome(db: Queryable, keyring: Keyring, row: McpTaskRow): Promise<McpTaskOutcome | undefined> {
  const { rows } = await db.query('SELECT sealed_outcome FROM mcp_tasks WHERE id_hash = $1', [row.idHash]);
  const sealed = rows[0]?.sealed_outcome;
  return sealed ? JSON.parse(keyring.decrypt(sealed, outcomeAad(row))) : undefined;
}

/**
 * Records the tool batch behind the task; answers true when the task was cancelled before (its
 * cancel found no batch to stop, so the recorder stops it). The row's lock orders this against
 * cancelMcpTask: whichever comes second sees what the other wrote.
 */
export async function setMcpTaskWorkflow(db: Queryable, row: McpTaskRow, workflowId: string): Promise<boolean> {
  const { rows } = await db.query(
    'UPDATE mcp_tasks SET workflow_id = $2, updated_at = now() WHERE id_hash = $1 AND workflow_id IS NULL RETURNING status',
    [row.idHash, workflowId],
  );
  return rows[0]?.status === 'cancelled';
}

/**
 * Keeps the task's answer (once: the first answer stands) and ends it: `completed` or `failed`
 * from the answer, unless it was cancelled first (then it stays cancelled, with the answer kept).
 */
export async function finishMcpTask(db: Queryable, keyring: Keyring, row: McpTaskRow, outcome: McpTaskOutcome): Promise<void> {
  const sealed = keyring.encrypt(JSON.stringify(outcome), outcomeAad(row));
  await db.query(
    `UPDATE mcp_tasks SET sealed_outcome = $2, updated_at = now(),
       status = CASE WHEN status = 'cancelled' THEN status ELSE $3 END
     WHERE id_hash = $1 AND sealed_outcome IS NULL`,
    [row.idHash, sealed, outcome.isError ? 'failed' : 'completed'],
  );
}

/**
 * Marks an unfinished task cancelled; answers the batch recorded with it by then (null: none yet,
 * and setMcpTaskWorkflow tells its recorder to stop it), or undefined when the task had already ended.
 */
export async function cancelMcpTask(db: Queryable, row: McpTaskRow, message: string): Promise<{ workflowId: string | null } | undefined> {
  const { rows } = await db.query(
    `UPDATE mcp_tasks SET status = 'cancelled', status_message = $2, updated_at = now()
     WHERE id_hash = $1 AND status IN ('working', 'input_required') RETURNING workflow_id AS "workflowId"`,
    [row.idHash, message],
  );
  return rows[0];
}

/** The owner's live tasks with their ids, newest first; `after` is the previous page's last id hash (the cursor). */
export async function listMcpTasks(
  db: Queryable,
  keyring: Keyring,
  owner: CallerOwner,
  after?: Buffer,
): Promise<(McpTaskRow & { taskId: string })[]> {
  const { rows } = await db.query(
    `SELECT ${COLUMNS}, sealed_id AS "sealedId" FROM mcp_tasks
     WHERE tenant_id = $1 AND user_id = $2 AND expires_at > now()
       AND ($3::bytea IS NULL OR (created_at, id_hash) < (SELECT created_at, id_hash FROM mcp_tasks WHERE id_hash = $3))
     ORDER BY created_at DESC, id_hash DESC LIMIT $4`,
    [owner.tenantId, owner.userId, after ?? null, MCP_TASKS_PAGE + 1],
  );
  return rows.map(({ sealedId, ...row }) => ({ ...row, taskId: keyring.decrypt(sealedId, idAad(row)) }));
}

/** Re-seals every task's arguments and answer under the active key (`keys reseal`); returns how many rows moved. */
export async function resealMcpTasks(db: Queryable, keyring: Keyring): Promise<number> {
  const { rows } = await db.query(
    `SELECT id_hash AS "idHash", tenant_id AS "tenantId", user_id AS "userId", tool, sealed_id, sealed_arguments, sealed_outcome
     FROM mcp_tasks`,
  );
  const stale = (sealed: string | null) => sealed !== null && Keyring.keyIdOf(sealed) !== keyring.activeKeyId;
  let moved = 0;
  for (const row of rows) {
    if (!stale(row.sealed_id) && !stale(row.sealed_arguments) && !stale(row.sealed_outcome)) continue;
    const reseal = (sealed: string | null, aad: string) => (sealed === null ? null : keyring.encrypt(keyring.decrypt(sealed, aad), aad));
    const { rowCount } = await db.query(
      `UPDATE mcp_tasks SET sealed_arguments = $4, sealed_outcome = $5, sealed_id = $6
       WHERE id_hash = $1 AND sealed_arguments = $2 AND sealed_outcome IS NOT DISTINCT FROM $3`,
      [
        row.idHash,
        row.sealed_arguments,
        row.sealed_outcome,
        reseal(row.sealed_arguments, argumentsAad(row)),
        reseal(row.sealed_outcome, outcomeAad(row)),
        reseal(row.sealed_id, idAad(row)),
      ],
    );
    moved += rowCount ?? 0;
  }
  return moved;
}
