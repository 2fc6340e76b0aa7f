import { execFileSync } from 'node:child_process';
import { chownSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type DevServer, startDevServer } from '../../bin/support/temporal-dev-server.js';
import { READINESS_CACHE_MS } from '../../surfaces/http/health.js';
import { createTestUser, type Stack, startStackOn, startWorld, type TestUser, testInfra } from '../support/harness.js';
import { freePort } from '../support/ports.js';

/**
 * Restarts of the two things Switchboard depends on, while it runs: a PRIVATE PostgreSQL cluster
 * and a PRIVATE Temporal dev server, so the shared ones other test files use are never disturbed.
 */

const STACK_TRACE = /\bat \S+ \(|\bat (file:|node:|\/)|node_modules|\n\s+at /;

// The authorization server and fake APIs are this file's; each describe runs its Switchboard on private infrastructure.
const world = await startWorld({
  clients: { github: {} },
  apis: true,
  stack: false,
  env: { CONNECTIONS_TOOL_TIMEOUT_MS: '5000', LOG_LEVEL: 'warn' },
});
const { apis } = world;

async function connectGithub(stack: Stack, user: TestUser, login: string) {
  await world.connectGithub(user, login, { stack });
}

/** /readyz until it answers `status` (or the cache window and a probe's timeout have passed): the last answer. */
async function readyzUntil(stack: Stack, status: number): Promise<Response> {
  const deadline = Date.now() + READINESS_CACHE_MS + 3_000;
  for (;;) {
    const res = await fetch(`${stack.baseUrl}/readyz`);
    if (res.status === status || Date.now() > deadline) return res;
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function request(stack: Stack, user: TestUser, tool: string, args: unknown, timeoutMs = 90_000) {
  const started = Date.now();
  const res = await fetch(`${stack.baseUrl}/v1/tools/${tool}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${user.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(args),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.text();
  return { status: res.status, text, body: JSON.parse(text), ms: Date.now() - started };
}

/** A private PostgreSQL cluster on a free loopback port, run as the `postgres` OS user when we are root. */
class PrivatePostgres {
  readonly dir = mkdtempSync(join(tmpdir(), 'switchboard-pg-'));
  readonly data = join(this.dir, 'data');
  port = 0;
  private readonly bin = `/usr/lib/postgresql/${readdirSync('/usr/lib/postgresql').sort().at(-1)}/bin`;

  private run(cmd: string, args: string[]) {
    const asRoot = userInfo().uid === 0;
    const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', join(this.bin, cmd), ...args]] : [join(this.bin, cmd), args];
    return execFileSync(file, argv, { stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 }).toString();
  }

  async init() {
    if (userInfo().uid === 0) {
      const pg = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
      const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
      chownSync(this.dir, pg, gid);
    }
    this.port = await freePort();
    this.run('initdb', ['-D', this.data, '--auth=trust', '-U', 'postgres', '--no-sync']);
    this.start();
  }

  get url() {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  private opts() {
    return ['-o', `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off`];
  }
  start() {
    this.run('pg_ctl', ['-D', this.data, ...this.opts(), '-l', join(this.dir, 'log'), '-w', '-t', '30', 'start']);
  }
  stop() {
    this.run('pg_ctl', ['-D', this.data, '-m', 'fast', '-w', '-t', '30', 'stop']);
  }
  destroy() {
    try {
      this.stop();
    } catch {}
    rmSync(this.dir, { recursive: true, force: true });
  }
}

describe('Postgres restarted during a batch', () => {
  let pg: PrivatePostgres;
  let stack: Stack;
  let carol: TestUser;

  beforeAll(async () => {
    pg = new PrivatePostgres();
    await pg.init();
    stack = await startStackOn({ ...testInfra(), databaseUrl: pg.url }, { env: world.env });
    carol = await createTestUser(stack, { email: 'carol-restarts@example.com' });
    await connectGithub(stack, carol, 'carol-restarts');
  }, 120_000);

  afterAll(async () => {
    await stack?.close().catch(() => {});
    pg?.destroy();
  });

  it('calls fail with a clear error or succeed; nothing is half-written; the service recovers without a restart', async () => {
    expect((await request(stack, carol, 'connections_execute', { name: 'github__get_authenticated_user' })).body.ok).toBe(true);

    apis.behave.set('/github/user', { delayMs: 1500 });
    apis.behave.set('/github/user/repos', { delayMs: 1500 });
    const batch = Array.from({ length: 12 }, (_, i) =>
      i % 3 === 0
        ? request(stack, carol, 'connections_execute', { name: 'github__get_authenticated_user' })
        : request(stack, carol, 'execute_tools', {
            executions: [{ tool: 'github_get_authenticated_user' }, { tool: 'github_list_repos', args: { perPage: 2 } }],
          }),
    );
    await new Promise((r) => setTimeout(r, 700));
    const restartStarted = Date.now();
    pg.stop();
    // While it is down: a clear 503, promptly, and /readyz names Postgres.
    const whileDown = await request(stack, carol, 'list_connections', {}, 20_000);
    // /readyz answers from one probe shared for READINESS_CACHE_MS (finding 14): the outage shows within that.
    const readyWhileDown = await readyzUntil(stack, 503);
    pg.start();
    console.log(`[restarts] Postgres down: list_connections ${whileDown.ms} ms ${whileDown.status} ${whileDown.text}`);
    expect(whileDown.status, whileDown.text).toBe(503);
    expect(whileDown.body).toEqual({ error: 'The database is unavailable right now; try again shortly' });
    expect(readyWhileDown.status).toBe(503);
    expect(await readyWhileDown.json()).toMatchObject({ postgres: 'down' });
    const restartMs = Date.now() - restartStarted;
    const results = await Promise.all(batch);
    apis.behave.delete('/github/user');
    apis.behave.delete('/github/user/repos');

    const summary = results.map((r) => ({ status: r.status, ms: r.ms, body: r.text.slice(0, 160) }));
    console.log(`[restarts] Postgres down/up in ${restartMs} ms; batch answers:`, summary);
    if (results.some((r) => r.status >= 500 && r.status !== 503)) console.log(stack.logs.text().slice(-4000));
    for (const r of results) {
      expect(r.text).not.toMatch(STACK_TRACE);
      expect(r.status === 200 || (r.status >= 400 && r.status < 500) || r.status === 503, r.text).toBe(true);
      if (r.status !== 200) expect(typeof r.body.error === 'string' || typeof r.body.error?.message === 'string', r.text).toBe(true);
      if (r.status === 200 && 'ok' in r.body) {
        if (!r.body.ok) expect(r.body.error.message ?? r.body.error.code, r.text).toEqual(expect.any(String));
      }
      if (r.status === 200 && 'results' in r.body) {
        for (const o of r.body.results) expect('result' in o || typeof o.error === 'string', JSON.stringify(o)).toBe(true);
      }
    }

    // The pool reconnects by itself: new requests succeed with the same process.
    await expect
      .poll(async () => (await request(stack, carol, 'connections_execute', { name: 'github__get_authenticated_user' })).body.ok, {
        timeout: 20_000,
        interval: 500,
      })
      .toBe(true);
    const after = await request(stack, carol, 'execute_tools', { executions: [{ tool: 'github_list_repos', args: { perPage: 1 } }] });
    expect(after.status).toBe(200);
    expect(after.body.results[0]).toEqual({ result: [expect.objectContaining({ full_name: 'carol-restarts/repo-0' })] });
    expect((await request(stack, carol, 'list_connections', {})).status).toBe(200);
    expect((await readyzUntil(stack, 200)).status).toBe(200);

    // Every audit row there is, is whole: no row without its outcome, duration or argument names.
    const { rows } = await stack.services.pool.query(
      `SELECT call_key, tenant_id, kind, actor_user_id, tool, outcome, duration_ms, arg_names FROM audit_log WHERE kind = 'tool_call'`,
    );
    console.log(`[restarts] ${rows.length} tool_call audit rows after the restart`);
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row).toMatchObject({
        call_key: expect.any(String),
        tenant_id: carol.user.tenantId,
        actor_user_id: carol.user.id,
        tool: expect.stringMatching(/^github/),
        outcome: expect.stringMatching(/^(ok|error)$/),
        duration_ms: expect.any(Number),
        arg_names: expect.any(Array),
      });
    }
  }, 120_000);
});

describe('Temporal dev server restarted', () => {
  let dir: string;
  let port: number;
  let server: DevServer | undefined;
  let stack: Stack;
  let dana: TestUser;
  const startServer = async () => {
    server = await startDevServer({ cli: inject('temporalCli'), port, dbFilename: join(dir, 'temporal.db'), headless: true });
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchboard-temporal-'));
    port = await freePort();
    await startServer();
    stack = await startStackOn({ ...testInfra(), temporalAddress: server!.address }, { env: world.env });
    dana = await createTestUser(stack, { email: 'dana-restarts@example.com' });
    await connectGithub(stack, dana, 'dana-restarts');
  }, 120_000);

  afterAll(async () => {
    await stack?.close().catch(() => {});
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('/readyz reports it, requests fail fast with a clear error, and work resumes after it is back', async () => {
    const call = () => request(stack, dana, 'connections_execute', { name: 'github__get_authenticated_user' }, 60_000);
    expect((await call()).body.ok).toBe(true);
    expect((await fetch(`${stack.baseUrl}/readyz`)).status).toBe(200);

    await server!.stop();
    let started = Date.now();
    const ready = await readyzUntil(stack, 503);
    const readyMs = Date.now() - started;
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ ok: false, temporal: 'down', postgres: 'up' });
    expect(readyMs).toBeLessThan(5_000 + READINESS_CACHE_MS);

    const down = await call();
    const downList = await request(stack, dana, 'execute_tools', { executions: [{ tool: 'github_list_repos' }] }, 60_000);
    started = Date.now();
    const downConnect = await request(stack, dana, 'connect', { integration: 'github' }, 60_000);
    const connectMs = Date.now() - started;
    console.log(`[restarts] Temporal down: /readyz ${readyMs} ms; connections_execute ${down.ms} ms ${down.status} ${down.text};`);
    console.log(
      `[restarts] execute_tools ${downList.ms} ms ${downList.status} ${downList.text}; connect ${connectMs} ms ${downConnect.status}`,
    );
    for (const r of [down, downList, downConnect]) {
      expect(r.status, r.text).toBe(503);
      expect(r.text).toMatch(/Temporal/);
      expect(r.text).not.toMatch(STACK_TRACE);
      expect(r.ms).toBeLessThan(15_000);
    }

    await startServer();
    started = Date.now();
    await expect.poll(async () => (await fetch(`${stack.baseUrl}/readyz`)).status, { timeout: 20_000, interval: 250 }).toBe(200);
    console.log(`[restarts] /readyz back to 200 ${Date.now() - started} ms after the dev server answered again`);
    console.log(`[restarts] in-process worker state after the restart: ${stack.worker?.getState()}`);
    started = Date.now();
    const back = await call();
    console.log(`[restarts] first call after the restart: ${back.ms} ms ${back.text.slice(0, 120)}; worker ${stack.worker?.getState()}`);
    expect(back.body.ok).toBe(true);
    expect(
      (await request(stack, dana, 'execute_tools', { executions: [{ tool: 'github_list_repos', args: { perPage: 1 } }] })).status,
    ).toBe(200);
  }, 120_000);
});
