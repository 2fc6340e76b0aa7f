import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import type { TestProject } from 'vitest/node';
import { startDevServer } from '../../bin/support/temporal-dev-server.js';
import { WORKFLOWS_PATH } from '../../plugin/index.js';
import { ensureDatabase } from '../../store/database.js';
import { freePort } from './ports.js';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    temporalCli: string;
    workflowBundlePath: string;
    testDatabaseUrl: string;
  }
}

/**
 * Once per `npm test`: one real Temporal dev server (in memory, headless) shared by every test
 * file, the workflow bundle built once, and the test database.
 */
export default async function setup(project: TestProject) {
  const cached = join(homedir(), '.cache', 'switchboard', 'bin', 'temporal');
  const cli = process.env.TEMPORAL_CLI ?? (existsSync(cached) ? cached : undefined);
  if (!cli) throw new Error('TEMPORAL_CLI is not set: run the tests with `npm test`, which builds or finds the Temporal CLI');
  const testDatabaseUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/switchboard_test';
  await ensureDatabase(testDatabaseUrl);

  const server = await startDevServer({ cli, port: await freePort(), headless: true });
  const bundle = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} } as never,
  });
  const dir = mkdtempSync(join(tmpdir(), 'switchboard-test-'));
  const workflowBundlePath = join(dir, 'workflow-bundle.js');
  writeFileSync(workflowBundlePath, bundle.code);

  project.provide('temporalAddress', server.address);
  project.provide('temporalCli', cli);
  project.provide('workflowBundlePath', workflowBundlePath);
  project.provide('testDatabaseUrl', testDatabaseUrl);
  return async () => {
    await server.stop();
  };
}
