import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { conformanceTools } from '../support/conformance.js';
import { createTestUser, startStack } from '../support/harness.js';

const ROOT = resolve(import.meta.dirname, '../..');

const stack = await startStack();
const user = await createTestUser(stack);
const own = new URL(stack.baseUrl);

/**
 * The suite's client sends no Authorization header (it has no option for one) and speaks to a
 * `localhost` URL. This stand-in for a public front door adds the user's API key, and maps its own
 * name (`localhost:<port>`, as Host and as Origin) to Switchboard's PUBLIC_BASE_URL; any other Host
 * or Origin passes unchanged, so the suite's DNS-rebinding requests reach Switchboard as sent.
 */
const proxy = createServer((req, res) => {
  const front = `localhost:${(proxy.address() as AddressInfo).port}`;
  const headers = { ...req.headers, authorization: `Bearer ${user.apiKey}` };
  if (headers.host === front) headers.host = own.host;
  if (headers.origin === `http://${front}`) headers.origin = own.origin;
  const upstream = request({ host: own.hostname, port: own.port, method: req.method, path: req.url, headers }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  upstream.on('error', () => {
    res.writeHead(502);
    res.end();
  });
  req.pipe(upstream);
});
await new Promise<void>((done) => proxy.listen(0, '127.0.0.1', done));

afterAll(async () => {
  proxy.closeAllConnections();
  await new Promise((done) => proxy.close(done));
  await stack.close();
});

describe('the official MCP conformance suite, server scenarios', () => {
  it('every scenario a product server can pass passes against /mcp; the fixture-only ones are in the baseline with their reasons', async () => {
    const { node, cli } = conformanceTools();
    const out = mkdtempSync(join(tmpdir(), 'conformance-server-'));
    const url = `http://localhost:${(proxy.address() as AddressInfo).port}/mcp`;
    try {
      const run = await promisify(execFile)(
        node,
        [cli, 'server', '--url', url, '--suite', 'all', '--expected-failures', 'test/support/conformance-server-baseline.yml', '-o', out],
        { cwd: ROOT, timeout: 170_000, maxBuffer: 16 * 1024 * 1024 },
      ).catch((err: { stdout?: string; stderr?: string }) => ({ ...err, failed: true }));
      const text = `${run.stdout ?? ''}${run.stderr ?? ''}`;
      expect('failed' in run, text.slice(-4000)).toBe(false);
      for (const scenario of [
        'server-initialize',
        'ping',
        'tools-list',
        'logging-set-level',
        'dns-rebinding-protection',
        'server-sse-multiple-streams',
      ]) {
        expect(text, scenario).toMatch(new RegExp(`✓ ${scenario}: \\d+ passed, 0 failed`));
      }
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 180_000);
});
