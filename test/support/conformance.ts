import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const ROOT = resolve(import.meta.dirname, '../..');

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

/**
 * Runs one conformance CLI (from `conformanceTools()` or `conformance2026Tools()`) with `args`, its
 * report in a temporary directory removed afterwards. `passed` is false when the suite exits non-zero:
 * a failure its baseline does not name, or a baseline entry that now passes. `text` is its whole output.
 */
export async function runConformance(
  tools: { node: string; cli: string },
  args: string[],
): Promise<{ passed: boolean; text: string; scenarioPassed(name: string): boolean }> {
  const out = mkdtempSync(join(tmpdir(), 'conformance-'));
  try {
    const run = await promisify(execFile)(tools.node, [tools.cli, ...args, '-o', out], {
      cwd: ROOT,
      timeout: 170_000,
      maxBuffer: 16 * 1024 * 1024,
    }).catch((err: { stdout?: string; stderr?: string }) => ({ ...err, failed: true }));
    const text = `${run.stdout ?? ''}${run.stderr ?? ''}`;
    return {
      passed: !('failed' in run),
      text,
      scenarioPassed: (name) => new RegExp(`✓ ${escapeRegExp(name)}: \\d+ passed, 0 failed`).test(text),
    };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
