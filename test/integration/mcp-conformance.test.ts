import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { conformanceTools } from '../support/conformance.js';
import { startConformanceFrontDoor } from '../support/conformance-front-door.js';
import { createTestUser, startStack } from '../support/harness.js';

const ROOT = resolve(import.meta.dirname, '../..');

const stack = await startStack();
const user = await createTestUser(stack);
const frontDoor = await startConformanceFrontDoor(stack.baseUrl, user.apiKey);

afterAll(async () => {
  await frontDoor.close();
  await stack.close();
});

describe('the official MCP conformance suite, server scenarios', () => {
  it('every scenario a product server can pass passes against /mcp; the fixture-only ones are in the baseline with their reasons', async () => {
    const { node, cli } = conformanceTools();
    const out = mkdtempSync(join(tmpdir(), 'conformance-server-'));
    try {
      const run = await promisify(execFile)(
        node,
        [
          cli,
          'server',
          '--url',
          frontDoor.url,
          '--suite',
          'all',
          '--expected-failures',
          'test/support/conformance-server-baseline.yml',
          '-o',
          out,
        ],
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
