import { describe, expect, it } from 'vitest';
import { conformanceTools, runConformance } from '../support/conformance.js';

describe('the official MCP conformance suite, client auth scenarios', () => {
  it('runs Switchboard’s discovery, registration and token code (providers/remote-mcp/oauth-client) through every `client --suite auth` scenario; failures only as the baseline says', async () => {
    // The harness runs on this process's Node with tsx; the suite itself needs Node ≥ 22.
    const harness = `${process.execPath} --import tsx test/support/conformance-auth-client.ts`;
    const run = await runConformance(conformanceTools(), [
      'client',
      '--command',
      harness,
      '--suite',
      'auth',
      '--expected-failures',
      'test/support/conformance-auth-baseline.yml',
    ]);
    expect(run.passed, run.text.slice(-4000)).toBe(true);
    for (const scenario of [
      'metadata-default',
      'metadata-var1',
      'metadata-var2',
      'metadata-var3',
      'basic-cimd',
      'scope-step-up',
      'scope-retry-limit',
    ]) {
      expect(run.scenarioPassed(`auth/${scenario}`), scenario).toBe(true);
    }
  }, 180_000);
});
