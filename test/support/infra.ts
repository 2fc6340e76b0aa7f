import { existsSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { TEMPORAL_SERVER_VERSION, temporalServerBinDir } from '../../scripts/setup.mjs';
import { FAILURE_CONVERTER_PATH, WORKFLOW_BUNDLE_OPTIONS, WORKFLOWS_PATH } from '../../surfaces/temporal-plugin/index.js';

/** What both `npm test` (global-setup.ts) and the benchmarks (bench/lib/environment.ts) start from. */

/** The Temporal CLI that `npm start` / `npm test` build or find once. */
export function findTemporalCli(): string {
  const cached = join(homedir(), '.cache', 'switchboard', 'bin', 'temporal');
  const cli = process.env.TEMPORAL_CLI ?? (existsSync(cached) ? cached : undefined);
  if (!cli) {
    throw new Error(`No Temporal CLI: set TEMPORAL_CLI, or run \`npm test\` once so it is built into ${cached}`);
  }
  return cli;
}

/** The folder with `temporal-server` and `temporal-sql-tool` that `npm run test:cluster` builds once. */
export function findTemporalServer(): string {
  const dir = temporalServerBinDir();
  if (!existsSync(join(dir, 'temporal-server')) || !existsSync(join(dir, 'temporal-sql-tool'))) {
    throw new Error(
      `No Temporal server ${TEMPORAL_SERVER_VERSION} in ${dir}: run \`npm run test:cluster\` once so it is built, or set TEMPORAL_SERVER_BIN`,
    );
  }
  return dir;
}

/**
 * Switchboard's workflows bundled once into `dir`, exactly as its worker bundles them (with the
 * failure converter that seals failure messages), so every worker of a run reuses the bundle.
 */
export async function bundleWorkflowsInto(dir: string): Promise<string> {
  const bundle = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    failureConverterPath: FAILURE_CONVERTER_PATH,
    preloadModules: [...WORKFLOW_BUNDLE_OPTIONS.preloadModules],
    logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} } as never,
  });
  const path = join(dir, 'workflow-bundle.js');
  writeFileSync(path, bundle.code);
  return path;
}
