import type { ChildProcess } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { completeConnection } from '../../features/connections/complete.js';
import { getAttempt } from '../../features/connections/store/connection-attempts.js';
import { createTestUser, killProcess, spawnServerProcess, spawnWorkerProcess, startWorld } from '../support/harness.js';
import { freePort } from '../support/ports.js';

// Crashes of Switchboard's own processes (SIGKILL, no shutdown) while work is in flight.

/** Every write below creates an issue here, titled after the call, so the fake's state counts hits per call. */
const ISSUES_PATH = '/github/repos/octocat/hello-world/issues';

const world = await startWorld({
  clients: { github: {} },
  apis: true,
  worker: false,
  // 50 calls on one account must all be at the service when the worker dies (the default lets 8 through at once).
  env: { CONNECTIONS_ACCOUNT_MAX_CONCURRENCY: '50' },
});
const { apis, stack } = world;
const children: ChildProcess[] = [];
world.onStop(() => {
  for (const child of children) child.kill('SIGKILL');
});

async function spawnWorker(): Promise<ChildProcess> {
  const child = await spawnWorkerProcess(stack);
  children.push(child);
  return child;
}

const connectedUser = world.githubUser;

const issueRequests = () => apis.requests.filter((r) => r.method === 'POST' && r.path === ISSUES_PATH).length;
const issuesTitled = (title: string) => apis.state.github.repos.get('octocat/hello-world')!.issues.filter((i) => i.title === title).length;

async function until(what: () => string, ok: () => boolean, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('process crashes', () => {
  it('Worker killed with SIGKILL while 50 tool calls are in flight and 100 waits are pending; a new worker starts: every wait ends right, no tool call reaches the service twice, every call has exactly one audit row', async () => {
    const started = Date.now();
    const first = await spawnWorker();
    const writer = await connectedUser('faults-gh');
    const waiters = await Promise.all(Array.from({ length: 10 }, () => createTestUser(stack)));

    // 100 pending connection attempts over ten users: even ones will be completed, odd ones time out.
    const attempts = await Promise.all(
      Array.from({ length: 100 }, async (_, i) => {
        const user = waiters[i % waiters.length];
        const { status, body } = await user.call('connect', { integration: 'github' });
        expect(status, JSON.stringify(body)).toBe(200);
        return { user, connectionId: body.connectionId as string, completes: i % 2 === 0 };
      }),
    );
    const waits = attempts.map(({ user, connectionId, completes }) =>
      user.call('wait_for_connection', { connectionId, timeoutSec: completes ? 120 : 8 }).then(
        (r) => r.body,
        (err: Error) => ({ error: err.message }),
      ),
    );

    // 50 writes, each its own batch, held by the fake service long enough to all be in flight at the kill.
    console.log(`worker crash: worker, users and 100 waits set up at ${Date.now() - started} ms`);
    apis.behave.set(ISSUES_PATH, { delayMs: 10_000 });
    const before = issueRequests();
    const calls = Array.from({ length: 50 }, (_, i) =>
      writer
        .call('connections_execute', {
          name: 'github__create_issue',
          arguments: { owner: 'octocat', repo: 'hello-world', title: `fault-${i}` },
        })
        .then(
          (r) => r.body,
          (err: Error) => ({ error: err.message }),
        ),
    );
    await until(
      () => `all 50 calls to reach the fake service (${issueRequests() - before} did)`,
      () => issueRequests() - before >= 50,
      60_000,
    );

    console.log(`worker crash: calls in flight at ${Date.now() - started} ms`);
    await killProcess(first);
    await spawnWorker();
    console.log(`worker crash: new worker up at ${Date.now() - started} ms`);
    apis.behave.delete(ISSUES_PATH);

    // Complete half of the attempts the way the OAuth callback does.
    await Promise.all(
      attempts
        .filter((a) => a.completes)
        .map(async ({ connectionId }, i) => {
          const attempt = await getAttempt(stack.services.pool, connectionId);
          const saved = await completeConnection(stack.services, attempt!, {
            label: `faults-${i}`,
            credential: { type: 'oauth2', accessToken: `access-${i}`, refreshToken: `refresh-${i}` },
          });
          expect(saved).toBeDefined();
        }),
    );

    const answers = await Promise.all(waits);
    const wrong = answers
      .map((answer, i) => ({ answer, expected: attempts[i].completes ? 'CONNECTED' : 'TIMEOUT' }))
      .filter(({ answer, expected }) => answer.status !== expected);
    expect(wrong, JSON.stringify(wrong.slice(0, 5))).toEqual([]);

    const outcomes = await Promise.all(calls);
    const unexpected = outcomes.filter(
      (o) => !o.ok && !(o.error?.code === 'outcome_unknown' && /interrupted; its outcome is unknown/.test(o.error.message)),
    );
    expect(unexpected, JSON.stringify(unexpected.slice(0, 3))).toEqual([]);

    // No call reached the service twice. The fake finishes the held requests (creating their issues) even though their
    // caller is gone.
    const created = () => apis.state.github.repos.get('octocat/hello-world')!.issues.filter((i) => i.title.startsWith('fault-')).length;
    await until(
      () => `the held requests to finish (${created()} did)`,
      () => created() >= 50,
      20_000,
    );
    expect(issueRequests() - before).toBe(50);
    for (let i = 0; i < 50; i++) expect(issuesTitled(`fault-${i}`), `fault-${i}`).toBe(1);

    const { rows } = await stack.services.pool.query(
      `SELECT call_key, count(*)::int AS n FROM audit_log WHERE actor_user_id = $1 GROUP BY call_key`,
      [writer.user.id],
    );
    expect(rows.filter((r) => r.call_key === null || r.n !== 1)).toEqual([]);
    expect(rows.length).toBe(50);
    console.log(
      `worker crash: ${outcomes.filter((o) => o.ok).length} ok, ${outcomes.length - outcomes.filter((o) => o.ok).length} outcome unknown; ${Date.now() - started} ms`,
    );
  }, 180_000);

  it("HTTP server killed mid-request: the agent's retry with the same request id gets the recorded result", async () => {
    const started = Date.now();
    const mark = (what: string) => console.log(`server crash: ${what} at ${Date.now() - started} ms`);
    if (!children.some((c) => c.exitCode === null && c.signalCode === null)) await spawnWorker();
    const agent = await connectedUser('faults-retry-gh');
    const port = await freePort();
    const send = (body: unknown) =>
      fetch(`http://127.0.0.1:${port}/v1/tools/execute_tools`, {
        method: 'POST',
        headers: { authorization: `Bearer ${agent.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const request = {
      executions: [{ tool: 'github_create_issue', args: { owner: 'octocat', repo: 'hello-world', title: 'retry-R' } }],
      requestId: 'R',
    };

    const server = await spawnServerProcess(stack, port);
    children.push(server);
    apis.behave.set(ISSUES_PATH, { delayMs: 2000 });
    const before = issueRequests();
    const open = send(request).then(
      (res) => ({ status: res.status }),
      (err: Error) => ({ error: err.message }),
    );
    await until(
      () => 'the call to reach the fake service',
      () => issueRequests() - before >= 1,
      20_000,
    );
    mark('call in flight');
    await killProcess(server);
    expect(await open).toHaveProperty('error');
    apis.behave.delete(ISSUES_PATH);

    children.push(await spawnServerProcess(stack, port));
    mark('new server up');
    const retry = await send(request);
    expect(retry.status).toBe(200);
    const body = await retry.json();
    expect(body.results).toHaveLength(1);
    expect(body.results[0]).toMatchObject({ result: { title: 'retry-R' } });
    // And again: the same recorded answer.
    expect(await (await send(request)).json()).toEqual(body);
    expect(issueRequests() - before).toBe(1);
    expect(issuesTitled('retry-R')).toBe(1);
    mark('done');
  }, 120_000);
});
