import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeApis, startFakeApis } from '../support/fake-apis.js';
import { connectGithubAccount } from '../support/github-account.js';
import { createTestUser, type Stack, spawnWorkerProcess, startStack } from '../support/harness.js';
import { startAuthServer, type TestAuthServer } from '../support/oauth-server.js';

// Rotating refresh tokens: a second use of a spent one revokes the whole grant, as Atlassian does.
const client = {
  clientId: 'storm',
  clientSecret: 'storm-secret-0123456789',
  redirectUris: ['http://127.0.0.1/cb'],
  rotateRefreshTokens: true,
};

let auth: TestAuthServer;
let apis: FakeApis;
let stack: Stack;
const workers: ChildProcess[] = [];

beforeAll(async () => {
  auth = await startAuthServer([client]);
  apis = await startFakeApis((token) => auth.subjectOf(token));
  stack = await startStack({ worker: false, env: { ...auth.envFor('GITHUB', client), GITHUB_API_BASE_URL: `${apis.baseUrl}/github` } });
  workers.push(await spawnWorkerProcess(stack), await spawnWorkerProcess(stack));
}, 120_000);

afterAll(async () => {
  for (const w of workers) w.kill('SIGKILL');
  await stack?.close();
  await apis?.close();
  await auth?.close();
});

describe('refresh storm across two worker processes', () => {
  it('100 concurrent calls on an expired rotating token: exactly one refresh reaches the server, all succeed', async () => {
    const user = await createTestUser(stack);
    await connectGithubAccount(stack, auth, client.clientId, user, 'storm-user', { label: 'storm', expired: true });
    const refreshes = auth.grants.refresh_token;
    const outcomes = await Promise.all(
      Array.from({ length: 100 }, () =>
        user.call('connections_execute', { name: 'github__get_authenticated_user', arguments: {} }).then((r) => r.body),
      ),
    );
    expect(outcomes.filter((o) => o.ok).length, JSON.stringify(outcomes.find((o) => !o.ok))).toBe(100);
    expect(auth.grants.refresh_token - refreshes).toBe(1);
    const { rows } = await stack.services.pool.query(
      `SELECT count(*)::int AS n FROM audit_log WHERE actor_user_id = $1 AND outcome = 'ok'`,
      [user.user.id],
    );
    expect(rows[0].n).toBe(100);
    // Both processes really served calls.
    const pids = new Set(
      stack.logs
        .text()
        .split('\n')
        .filter((line) => line.includes('"msg":"tool call"'))
        .map((line) => JSON.parse(line).pid),
    );
    expect(pids).toEqual(new Set(workers.map((w) => w.pid)));
  }, 120_000);
});
