import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

/** Where `npm test`'s setup put the conformance suite and its Node (scripts/setup.mjs, ensureConformanceSuite). */
function conformanceTools(): { node: string; cli: string } {
  const manifest = join(homedir(), '.cache', 'switchboard', 'conformance.json');
  const tools =
    process.env.MCP_CONFORMANCE_NODE && process.env.MCP_CONFORMANCE_CLI
      ? { node: process.env.MCP_CONFORMANCE_NODE, cli: process.env.MCP_CONFORMANCE_CLI }
      : existsSync(manifest)
        ? (JSON.parse(readFileSync(manifest, 'utf8')) as { node: string; cli: string })
        : undefined;
  if (!tools || !existsSync(tools.node) || !existsSync(tools.cli)) {
    throw new Error('The MCP conformance suite is not installed: run the tests with `npm test`, whose setup installs it');
  }
  return tools;
}

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
