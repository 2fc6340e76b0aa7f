import { createHash, randomBytes } from 'node:crypto';
import type { Queryable } from '../../../platform/database/queryable.js';

/** What a 2025-revision MCP client declared at `initialize`, kept for the rest of its session. */
export interface McpSession {
  protocolVersion: string;
  capabilities: Record<string, unknown>;
}

/** A session unused this long is gone (the client initializes again on the 404). */
const MCP_SESSION_IDLE_SEC = 24 * 60 * 60;
/** Live sessions one user keeps at most; opening one more ends the oldest. */
const MCP_SESSIONS_PER_USER = 50;
/** Declared capabilities larger than this (JSON) are kept as none: a client gains nothing by them. */
const MAX_CAPABILITIES_BYTES = 16 * 1024;

const hashOf = (id: string) => createHash('sha256').update(id).digest();

/** Starts a session for the caller; answers its id (the `Mcp-Session-Id`, never stored). */
export async function openMcpSession(
  db: Queryable,
  owner: { tenantId: string; userId: string },
  declared: { protocolVersion: string; capabilities: unknown },
): Promise<string> {
  const id = randomBytes(24).toString('base64url');
  const json = JSON.stringify(declared.capabilities ?? {});
  // jsonb refuses NUL characters; a declaration that big or that odd counts as none.
  const capabilities = Buffer.byteLength(json) <= MAX_CAPABILITIES_BYTES && json.startsWith('{') && !json.includes('\\u0000') ? json : '{}';
  await db.query(
    `INSERT INTO mcp_sessions (id_hash, tenant_id, user_id, protocol_version, client_capabilities, expires_at)
     VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6))`,
    [
      hashOf(id),
      owner.tenantId,
      owner.userId,
      declared.protocolVersion.replace(/\0/g, '').slice(0, 40),
      capabilities,
      MCP_SESSION_IDLE_SEC,
    ],
  );
  // Bounded per user: the oldest beyond the limit (and any expired ones) end here.
  await db.query(
    `DELETE FROM mcp_sessions WHERE tenant_id = $1 AND user_id = $2 AND (expires_at < now() OR id_hash IN (
       SELECT id_hash FROM mcp_sessions WHERE tenant_id = $1 AND user_id = $2 ORDER BY created_at DESC OFFSET $3))`,
    [owner.tenantId, owner.userId, MCP_SESSIONS_PER_USER],
  );
  return id;
}

/**
 * The caller's live session of this id, its idle expiry moved on; undefined for an unknown or
 * expired id and for another user's (the same answer: the client initializes again).
 */
export async function findMcpSession(
  db: Queryable,
  id: string,
  owner: { tenantId: string; userId: string },
): Promise<McpSession | undefined> {
  const { rows } = await db.query(
    `UPDATE mcp_sessions SET expires_at = now() + make_interval(secs => $4)
      WHERE id_hash = $1 AND tenant_id = $2 AND user_id = $3 AND expires_at > now()
      RETURNING protocol_version, client_capabilities`,
    [hashOf(id), owner.tenantId, owner.userId, MCP_SESSION_IDLE_SEC],
  );
  return rows[0] ? { protocolVersion: rows[0].protocol_version, capabilities: rows[0].client_capabilities } : undefined;
}

/** Ends the caller's session (HTTP DELETE); answers whether there was one. */
export async function closeMcpSession(db: Queryable, id: string, owner: { tenantId: string; userId: string }): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM mcp_sessions WHERE id_hash = $1 AND tenant_id = $2 AND user_id = $3', [
    hashOf(id),
    owner.tenantId,
    owner.userId,
  ]);
  return (rowCount ?? 0) > 0;
}
