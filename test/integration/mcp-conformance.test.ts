import { describe, expect, it } from 'vitest';
import { conformanceTools, runConformance } from '../support/conformance.js';
import { startConformanceTarget } from '../support/conformance-front-door.js';

const frontDoor = await startConformanceTarget();

describe('the official MCP conformance suite, server scenarios', () => {
  it('every scenario a product server can pass passes against /mcp; the fixture-only ones are in the baseline with their reasons', async () => {
    const run = await runConformance(conformanceTools(), [
      'server',
      '--url',
      frontDoor.url,
      '--suite',
      'all',
      '--expected-failures',
      'test/support/conformance-server-baseline.yml',
    ]);
    expect(run.passed, run.text.slice(-4000)).toBe(true);
    for (const scenario of [
      'server-initialize',
      'ping',
      'tools-list',
      'logging-set-level',
      'dns-rebinding-protection',
      'server-sse-multiple-streams',
    ]) {
      expect(run.scenarioPassed(scenario), scenario).toBe(true);
    }
  }, 180_000);
});
