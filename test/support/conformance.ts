import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** Where `npm test`'s setup put the conformance suite and its Node (scripts/setup.mjs, ensureConformanceSuite). */
export function conformanceTools(): { node: string; cli: string } {
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
