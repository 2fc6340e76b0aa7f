import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { conformanceTools } from '../support/conformance.js';

const ROOT = resolve(import.meta.dirname, '../..');

describe('the official MCP conformance suite, client auth scenarios', () => {
  it('runs Switchboard’s discovery, registration and token code (providers/mcp-auth) through every `client --suite auth` scenario; failures only as the baseline says', async () => {
    const { node, cli } = conformanceTools();
    const out = mkdtempSync(join(tmpdir(), 'conformance-auth-'));
    // The harness runs on this process's Node with tsx; the suite itself needs Node ≥ 22.
    const harness = `${process.execPath} --import tsx test/support/conformance-auth-client.ts`;
    try {
      const run = await promisify(execFile)(
        node,
        [
          cli,
          'client',
          '--command',
          harness,
          '--suite',
          'auth',
          '--expected-failures',
          'test/support/conformance-auth-baseline.yml',
          '-o',
          out,
        ],
        { cwd: ROOT, timeout: 170_000, maxBuffer: 16 * 1024 * 1024 },
      ).catch((err: { stdout?: string; stderr?: string }) => ({ ...err, failed: true }));
      const text = `${run.stdout ?? ''}${run.stderr ?? ''}`;
      expect('failed' in run, text.slice(-4000)).toBe(false);
      for (const scenario of [
        'metadata-default',
        'metadata-var1',
        'metadata-var2',
        'metadata-var3',
        'basic-cimd',
        'scope-step-up',
        'scope-retry-limit',
      ]) {
        expect(text).toMatch(new RegExp(`✓ auth/${scenario}: \\d+ passed, 0 failed`));
      }
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 180_000);
});
