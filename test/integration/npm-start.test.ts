import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../support/ports.js';
import { rawRequest } from '../support/raw-http.js';

const ROOT = join(import.meta.dirname, '..', '..');

function processesMentioning(marker: string): string[] {
  const out = execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' });
  return out.split('\n').filter((line) => line.includes(marker) && !line.includes('ps -eo'));
}

describe('npm start', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'switchboard-start-'));
  const schema = `s_${randomBytes(5).toString('hex')}`;
  let child: ChildProcess | undefined;

  afterAll(async () => {
    if (child && child.exitCode === null) process.kill(-child.pid!, 'SIGKILL');
    const client = new pg.Client({ connectionString: inject('testDatabaseUrl') });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('brings up Temporal, Postgres, worker and server, prints the key and URLs, and Ctrl-C stops it all', async () => {
    const [port, temporalPort, uiPort, metricsPort, demoPort] = [
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
    ];
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PORT: String(port),
      TEMPORAL_PORT: String(temporalPort),
      TEMPORAL_UI_PORT: String(uiPort),
      METRICS_PORT: String(metricsPort),
      DEMO_PORT: String(demoPort),
      SWITCHBOARD_DATA_DIR: dataDir,
      DATABASE_URL: inject('testDatabaseUrl'),
      DATABASE_SCHEMA: schema,
      TEMPORAL_CLI: inject('temporalCli'),
      LOG_LEVEL: 'warn',
    };
    delete env.TEMPORAL_ADDRESS;
    child = spawn(process.execPath, ['scripts/start.mjs'], { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout?.on('data', (d) => {
      output += d;
    });
    child.stderr?.on('data', (d) => {
      output += d;
    });
    const deadline = Date.now() + 120_000;
    while (!output.includes('Press Ctrl-C') && Date.now() < deadline && child.exitCode === null)
      await new Promise((r) => setTimeout(r, 200));
    expect(output, output).toContain('Switchboard is running');
    // It says which Node runs it (the suite's own, a supported line: no warning).
    expect(output).toContain(`[switchboard] Node ${process.versions.node} (${process.execPath})`);
    expect(output).not.toContain('warning: Node');

    const key = /Demo API key\s+(sbk_\S+)/.exec(output)?.[1];
    expect(key).toBeTruthy();
    expect(output).toContain(`http://localhost:${port}/portal`);
    expect(output).toContain(`http://localhost:${port}/mcp`);
    expect(output).toContain(`http://127.0.0.1:${uiPort}/namespaces/default/workflows`);

    const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect(ready.status).toBe(200);
    // The printed spelling (localhost) and 127.0.0.1 both reach it; metrics are on the loopback operator port.
    expect((await rawRequest(`http://127.0.0.1:${port}/healthz`, { headers: { host: `localhost:${port}` } })).status).toBe(200);
    expect(output).toContain(`http://127.0.0.1:${metricsPort}/metrics`);
    expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(404);
    expect(await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()).toContain('switchboard_');
    const integrations = await fetch(`http://127.0.0.1:${port}/v1/tools/list_integrations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(integrations.status).toBe(200);
    // The demo integration is on in development, on its own port.
    expect((await integrations.json()).integrations.map((i: { name: string }) => i.name)).toEqual(
      expect.arrayContaining(['github', 'demo']),
    );
    expect(output).toContain(`Demo integration http://127.0.0.1:${demoPort}`);
    // Temporal UI is up and knows the namespace.
    const ns = await fetch(`http://127.0.0.1:${uiPort}/api/v1/namespaces/default`);
    expect(ns.status).toBe(200);
    expect((await ns.json()).namespaceInfo.name).toBe('default');

    // Ctrl-C reaches the whole foreground process group.
    process.kill(-child.pid!, 'SIGINT');
    const code = await new Promise<number | null>((resolve) => child!.once('exit', (c) => resolve(c)));
    expect(code).toBe(0);
    await new Promise((r) => setTimeout(r, 500));
    expect(processesMentioning(dataDir)).toEqual([]);
    expect(processesMentioning(`--port ${temporalPort}`)).toEqual([]);
  }, 180_000);
});
