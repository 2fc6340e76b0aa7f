import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import express, { Router } from 'express';
import type Provider from 'oidc-provider';
import { z } from 'zod';
import { answerStatelessMcp } from '../surfaces/mcp/stateless-transport.js';
import { accessTokenVerifier } from './access-token-verifier.js';
import { DEMO_SCOPES } from './authorization-server.js';
import type { DemoState } from './demo-state.js';
import { type TaskBoard, TaskNotFound } from './task-board.js';

export interface DemoMcpServerOptions {
  provider: Provider;
  issuer: string;
  /** This server's MCP endpoint, which is also the resource its tokens name (RFC 8707). */
  mcpUrl: string;
  board: TaskBoard;
  state: DemoState;
}

/** Who a verified token speaks for, and its life (for `whoami`). */
interface TokenFacts {
  account: string;
  grantId?: string;
  issuedAt?: number;
}

/** The RFC 9728 well-known path of a resource at `/mcp` (the path inserted after the well-known prefix). */
export const PROTECTED_RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource/mcp';

const taskId = z.string().regex(/^t_[0-9a-f]{8}$/, 'a task id from list_tasks, e.g. t_0a1b2c3d');

/**
 * The demo's remote MCP server, a protected resource the way the MCP authorization spec says: its
 * RFC 9728 metadata names the demo authorization server; every request needs a bearer token that
 * server issued for this resource with both demo scopes (else 401 with `WWW-Authenticate:
 * Bearer … scope=… resource_metadata=…`, which is how Switchboard discovers everything). Its tools
 * are a to-do list: three reads, two writes and a destructive delete, annotated so Switchboard
 * sees which is which (deleting waits for a person's approval by default).
 */
export function demoMcpServer(options: DemoMcpServerOptions): Router {
  const { provider, mcpUrl, board, state } = options;
  const origin = new URL(mcpUrl).origin;
  const metadataUrl = `${origin}${PROTECTED_RESOURCE_METADATA_PATH}`;
  const router = Router();

  router.get(PROTECTED_RESOURCE_METADATA_PATH, (_req, res) => {
    res.json({
      resource: mcpUrl,
      authorization_servers: [options.issuer],
      scopes_supported: Object.keys(DEMO_SCOPES),
      bearer_methods_supported: ['header'],
      resource_name: 'Demo Tasks (Switchboard demo)',
    });
  });

  const verifier = accessTokenVerifier(provider, (found): TokenFacts & Record<string, unknown> => ({
    account: found.accountId ?? '',
    grantId: found.grantId,
    issuedAt: found.iat,
  }));

  router.post(
    '/mcp',
    requireBearerAuth({
      verifier,
      requiredScopes: Object.keys(DEMO_SCOPES),
      resourceMetadataUrl: metadataUrl,
      expectedResource: new URL(mcpUrl),
    }),
    express.json({ limit: '64kb' }),
    async (req, res) => {
      const facts = req.auth?.extra as unknown as TokenFacts;
      const server = tools(board, state, facts, req.auth?.expiresAt);
      // Stateless: one server per request, JSON answers; nothing of a session to keep or lose.
      await answerStatelessMcp(server, req, res, { json: true });
    },
  );
  // A stateless server keeps no stream for a GET to open and no session for a DELETE to end.
  router.all('/mcp', (_req, res) => {
    res
      .status(405)
      .set('Allow', 'POST')
      .json({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed' }, id: null });
  });
  return router;
}

const answer = (value: Record<string, unknown>): CallToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(value) }],
  structuredContent: value,
});

const failed = (message: string): CallToolResult => ({ isError: true, content: [{ type: 'text', text: message }] });

/** A tool body whose "no such task" is the tool's own error answer, as a real service's would be. */
const orNotFound = (run: () => CallToolResult): CallToolResult => {
  try {
    return run();
  } catch (err) {
    if (err instanceof TaskNotFound) return failed(err.message);
    throw err;
  }
};

const isoOf = (epochSec?: number) => (epochSec === undefined ? undefined : new Date(epochSec * 1000).toISOString());

function tools(board: TaskBoard, state: DemoState, facts: TokenFacts, expiresAt?: number): McpServer {
  const server = new McpServer({ name: 'demo-tasks', version: '1.0.0' });
  const { account } = facts;
  const closed = { openWorldHint: false };

  server.registerTool(
    'whoami',
    {
      title: 'Who am I',
      description:
        'Which demo account this connection is signed in as, and the life of its access token: when it was issued, when it expires, and how many times Switchboard has refreshed it on its own.',
      annotations: { readOnlyHint: true, ...closed },
    },
    async () =>
      answer({
        account,
        token: {
          issuedAt: isoOf(facts.issuedAt),
          expiresAt: isoOf(expiresAt),
          refreshes: (facts.grantId && state.data.refreshes[facts.grantId]) || 0,
        },
      }),
  );
  server.registerTool(
    'list_tasks',
    {
      title: 'List tasks',
      description: 'List the tasks on your demo to-do list (id, title, done), open ones, done ones or all (the default).',
      inputSchema: { status: z.enum(['open', 'done', 'all']).optional().describe('Which tasks: open, done or all (default all).') },
      annotations: { readOnlyHint: true, ...closed },
    },
    async ({ status }) => answer({ tasks: board.list(account, status) }),
  );
  server.registerTool(
    'get_task',
    {
      title: 'Get a task',
      description: 'Get one task of your demo to-do list by its id (from list_tasks).',
      inputSchema: { id: taskId },
      annotations: { readOnlyHint: true, ...closed },
    },
    async ({ id }) => orNotFound(() => answer({ task: board.get(account, id) })),
  );
  server.registerTool(
    'create_task',
    {
      title: 'Create a task',
      description: 'Add a task to your demo to-do list; answers the new task with its id.',
      inputSchema: { title: z.string().trim().min(1).max(200).describe('What the task is, e.g. "Buy milk".') },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, ...closed },
    },
    async ({ title }) => {
      try {
        return answer({ task: board.create(account, title) });
      } catch (err) {
        return failed((err as Error).message);
      }
    },
  );
  server.registerTool(
    'complete_task',
    {
      title: 'Complete a task',
      description: 'Mark a task of your demo to-do list done (doing it twice changes nothing).',
      inputSchema: { id: taskId },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, ...closed },
    },
    async ({ id }) => orNotFound(() => answer({ task: board.complete(account, id) })),
  );
  server.registerTool(
    'delete_task',
    {
      title: 'Delete a task',
      description: 'Delete a task from your demo to-do list for good.',
      inputSchema: { id: taskId },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, ...closed },
    },
    async ({ id }) => orNotFound(() => answer({ deleted: board.delete(account, id) })),
  );
  return server;
}
