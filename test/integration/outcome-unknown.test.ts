import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { insertAccount } from '../../features/accounts/store/accounts.js';
import { createTestUser, startWorld, type TestUser } from '../support/harness.js';
import { startTestUpstream } from '../support/mcp-upstream-server.js';
import { freePort } from '../support/ports.js';

// A call whose request may have reached the service, and whose answer was lost on the way back,
// answers `outcome_unknown` (check before retrying), never `tool_failed` (which an agent retries):
// a REST service that cuts the connection after reading the request, an upstream MCP server that
// drops the connection or ends its answer's stream mid-call. A connection refused before anything
// was sent stays `tool_failed`: nothing reached the service.

const API_KEY = 'cutting-upstream-key-0123456789';
const upstream = await startTestUpstream({
  apiKey: API_KEY,
  cutCalls: { drop_connection: 'reset', end_stream: 'end' },
  extraTools: (server) => {
    for (const name of ['drop_connection', 'end_stream']) {
      server.registerTool(
        name,
        { description: `Moves money, then ${name}`, inputSchema: { amount: z.number() }, annotations: { destructiveHint: false } },
        async () => ({
          content: [{ type: 'text', text: 'never answered' }],
        }),
      );
    }
  },
});
const world = await startWorld({
  clients: { github: {} },
  apis: true,
  env: {
    CONNECTIONS_TOOL_TIMEOUT_MS: '8000',
    UPSTREAM_MCP_ALLOWED_HOSTS: '127.0.0.1',
    UPSTREAM_MCP_SERVERS: JSON.stringify([
      { name: 'bank', displayName: 'Bank', url: upstream.url, auth: { type: 'apikey', header: 'X-Api-Key', label: 'Key' } },
    ]),
  },
});
const { apis, stack } = world;
afterAll(() => upstream.close());

const execute = (user: TestUser, name: string, args: Record<string, unknown> = {}) =>
  user.call('connections_execute', { name, arguments: args }).then((r) => r.body);

describe('a REST service', () => {
  it('that cuts the connection after reading the request: outcome_unknown, and the call is not run again', async () => {
    const ann = await world.githubUser('ann-cut');
    const path = '/github/repos/ann-cut/repo-0/issues';
    for (const reset of ['before-answer', 'mid-body'] as const) {
      apis.behave.set(path, { reset, times: 1 });
      const before = apis.requests.filter((r) => r.path === path).length;
      const answer = await execute(ann, 'github__create_issue', { owner: 'ann-cut', repo: 'repo-0', title: 'pay the rent' });
      expect(answer, reset).toMatchObject({
        ok: false,
        error: { code: 'outcome_unknown', message: expect.stringMatching(/may have reached github.*check before retrying/) },
      });
      expect(apis.requests.filter((r) => r.path === path).length, reset).toBe(before + 1);
    }
    const { rows } = await stack.services.pool.query(
      `SELECT error_code FROM audit_log WHERE actor_user_id = $1 AND tool = 'github__create_issue' ORDER BY created_at`,
      [ann.user.id],
    );
    expect(rows).toEqual([{ error_code: 'outcome_unknown' }, { error_code: 'outcome_unknown' }]);
  });

  it('that refuses the connection: tool_failed, since nothing reached it', async () => {
    const closed = await freePort();
    const elsewhere = await world.startStack({ env: { GITHUB_API_BASE_URL: `http://127.0.0.1:${closed}/github` } });
    const bea = await createTestUser(elsewhere);
    await world.connectGithub(bea, 'bea-refused', { stack: elsewhere });
    const answer = await execute(bea, 'github__create_issue', { owner: 'bea-refused', repo: 'repo-0', title: 'x' });
    expect(answer).toMatchObject({ ok: false, error: { code: 'tool_failed', message: expect.stringContaining('ECONNREFUSED') } });
  });
});

describe('an upstream MCP server', () => {
  it('that drops the connection or ends the answer mid-call: outcome_unknown, at once rather than at the deadline', async () => {
    const cal = await createTestUser(stack);
    await insertAccount(stack.services.pool, stack.services.keyring, {
      tenantId: cal.user.tenantId,
      ownerUserId: cal.user.id,
      integration: 'bank',
      label: 'Bank',
      credential: { type: 'apikey', fields: { apiKey: API_KEY }, boundTo: `mcp:${upstream.url}` },
    });
    for (const tool of ['drop_connection', 'end_stream']) {
      const started = Date.now();
      const answer = await execute(cal, `bank__${tool}`, { amount: 100 });
      expect(answer, tool).toMatchObject({
        ok: false,
        error: { code: 'outcome_unknown', message: expect.stringMatching(/may have reached bank.*check before retrying/) },
      });
      expect(
        upstream.calls.filter((c) => c === tool),
        tool,
      ).toHaveLength(1);
      // Not the 8 s deadline: the loss is seen when it happens.
      expect(Date.now() - started, tool).toBeLessThan(6000);
    }
    // The session is still usable afterwards (or opened again): the next call is answered.
    expect(await execute(cal, 'bank__echo', { message: 'still here' })).toEqual({ ok: true, result: 'echo: still here' });
  });
});
