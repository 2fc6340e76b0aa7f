import type { ChildProcess } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { connectGithubAccount } from '../support/github-account.js';
import { createTestUser, spawnWorkerProcess, startWorld } from '../support/harness.js';

// Rotating refresh tokens: a second use of a spent one revokes the whole grant, as Atlassian does.
const client = { clientId: 'storm', clientSecret: 'storm-secret-0123456789', rotateRefreshTokens: true };
const world = await startWorld({ clients: { github: client }, apis: true, worker: false });
const { auth, stack } = world;
const workers: ChildProcess[] = [await spawnWorkerProcess(stack), await spawnWorkerProcess(stack)];
world.onStop(() => {
  for (const w of workers) w.kill('SIGKILL');
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
