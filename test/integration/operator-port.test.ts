import { describe, expect, it } from 'vitest';
import { spawnWorkerProcess, startWorld } from '../support/harness.js';
import { freePort } from '../support/ports.js';
import { rawRequest } from '../support/raw-http.js';

/**
 * Finding 14. Anyone who reaches the service port read /metrics (tool names, tenants' traffic,
 * the process's internals) and could make /readyz cost a Temporal call and a Postgres query per
 * hit. Metrics now live on the operator port (METRICS_PORT, loopback by default), and readiness
 * answers from one probe shared by every request for a couple of seconds.
 */

const metricsPort = await freePort();
const { stack } = await startWorld({ worker: false, env: { METRICS_PORT: String(metricsPort) } });

describe('finding 14: metrics and readiness', () => {
  it('finding 14: /metrics is not on the service port; the loopback operator port serves it', async () => {
    const onService = await fetch(`${stack.baseUrl}/metrics`);
    expect(onService.status).toBe(404);
    expect(await onService.text()).not.toContain('switchboard_');

    expect(stack.http.operator?.url).toBe(`http://127.0.0.1:${metricsPort}`);
    const metrics = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain('switchboard_http_request_duration_seconds');
    expect((await fetch(`http://127.0.0.1:${metricsPort}/readyz`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${metricsPort}/healthz`)).status).toBe(200);
  });

  it('finding 14: the operator port refuses a rebound name and any web page', async () => {
    const url = `http://127.0.0.1:${metricsPort}/metrics`;
    expect((await rawRequest(url, { headers: { host: `rebind.test:${metricsPort}` } })).status).toBe(421);
    expect((await rawRequest(url, { headers: { host: `localhost:${metricsPort}` } })).status).toBe(200);
    const fromPage = await rawRequest(url, { headers: { origin: 'http://evil.example.com' } });
    expect(fromPage.status).toBe(403);
    expect(fromPage.text).not.toContain('switchboard_');
  });

  it('finding 14: a worker process (npm run worker) serves its own metrics on its operator port, the same setting', async () => {
    const workerPort = await freePort();
    const worker = await spawnWorkerProcess({ ...stack, env: { ...stack.env, METRICS_PORT: String(workerPort) } });
    try {
      const metrics = await fetch(`http://127.0.0.1:${workerPort}/metrics`);
      expect(metrics.status).toBe(200);
      expect(await metrics.text()).toContain('switchboard_worker_cached_workflows');
      expect((await fetch(`http://127.0.0.1:${workerPort}/readyz`)).status).toBe(200);
      expect((await rawRequest(`http://127.0.0.1:${workerPort}/metrics`, { headers: { host: 'rebind.test' } })).status).toBe(421);
    } finally {
      worker.kill('SIGTERM');
      await new Promise((resolve) => worker.once('exit', resolve));
    }
  }, 120_000);

  it('finding 14: 100 /readyz hits make at most a handful of Temporal and Postgres probes', async () => {
    const { services } = stack;
    // Count the real calls the probe makes: Temporal's GetSystemInfo and Postgres' `SELECT 1`.
    let temporalCalls = 0;
    let postgresCalls = 0;
    const workflowService = services.temporal.workflowService as unknown as { getSystemInfo: (...a: unknown[]) => Promise<unknown> };
    const getSystemInfo = workflowService.getSystemInfo;
    workflowService.getSystemInfo = function (this: unknown, ...args: unknown[]) {
      temporalCalls++;
      return getSystemInfo.apply(this, args);
    };
    const pool = services.pool as unknown as { query: (...a: unknown[]) => Promise<unknown> };
    const query = pool.query;
    pool.query = function (this: unknown, ...args: unknown[]) {
      if (args[0] === 'SELECT 1') postgresCalls++;
      return query.apply(this, args);
    };
    try {
      // Half at once (a crowd of checks), half one after another (a check in a loop).
      const crowd = await Promise.all(Array.from({ length: 50 }, () => fetch(`${stack.baseUrl}/readyz`)));
      const loop: number[] = [];
      for (let i = 0; i < 50; i++) loop.push((await fetch(`${stack.baseUrl}/readyz`)).status);
      expect([...crowd.map((r) => r.status), ...loop]).toEqual(Array(100).fill(200));
      expect(await crowd[0].json()).toEqual({ ok: true, temporal: 'up', postgres: 'up' });
      console.log(`[operator-port] 100 /readyz: ${temporalCalls} Temporal calls, ${postgresCalls} Postgres queries`);
      expect(temporalCalls).toBeGreaterThanOrEqual(1);
      expect(temporalCalls).toBeLessThanOrEqual(5);
      expect(postgresCalls).toBeLessThanOrEqual(5);
    } finally {
      workflowService.getSystemInfo = getSystemInfo;
      pool.query = query;
    }
  });
});
