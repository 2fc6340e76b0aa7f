import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

interface Manifest {
  node: string;
  cli: string;
  cli2026?: string;
}

const notInstalled = (what: string) =>
  new Error(`${what} is not installed: run the tests with \`npm test\`, whose setup installs it (scripts/setup.mjs)`);

/** What `npm test`'s setup recorded (scripts/setup.mjs, ensureConformanceSuite): from its environment, else the cache's manifest. */
function manifest(): Partial<Manifest> {
  const file = join(homedir(), '.cache', 'switchboard', 'conformance.json');
  const recorded: Partial<Manifest> = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
  return {
    node: process.env.MCP_CONFORMANCE_NODE ?? recorded.node,
    cli: process.env.MCP_CONFORMANCE_CLI ?? recorded.cli,
    cli2026: process.env.MCP_CONFORMANCE_2026_CLI ?? recorded.cli2026,
  };
}

/** Where setup put the conformance suite (the stable release, 2025 revisions) and its Node. */
export function conformanceTools(): { node: string; cli: string } {
  const { node, cli } = manifest();
  if (!node || !cli || !existsSync(node) || !existsSync(cli)) throw notInstalled('The MCP conformance suite');
  return { node, cli };
}

/** The release of the suite with the 2026-07-28 scenarios (a prerelease, pinned in setup) and the same Node. */
export function conformance2026Tools(): { node: string; cli: string } {
  const { node, cli2026 } = manifest();
  if (!node || !cli2026 || !existsSync(node) || !existsSync(cli2026)) throw notInstalled('The MCP conformance suite for 2026-07-28');
  return { node, cli: cli2026 };
}
