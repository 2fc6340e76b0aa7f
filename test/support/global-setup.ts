import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startDevServer } from '../../bin/support/temporal-dev-server.js';
import { ensureDatabase } from '../../platform/database/database.js';
import { bundleWorkflowsInto, findTemporalCli } from './infra.js';
import { freePort } from './ports.js';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    temporalCli: string;
    workflowBundlePath: string;
    testDatabaseUrl: string;
    /** Set by `npm run test:cluster` (cluster-setup.ts): run each stack's servers and workers as processes. */
    stackProcesses?: { servers: number; workers: number };
  }
}

/**
 * Once per `npm test`: one real Temporal dev server (in memory, headless) shared by every test
 * file, the workflow bundle built once, and the test database.
 */
export default async function setup(project: TestProject) {
  const cli = findTemporalCli();
  const testDatabaseUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/switchboard_test';
  await ensureDatabase(testDatabaseUrl);

  const server = await startDevServer({ cli, port: await freePort(), headless: true });
  const workflowBundlePath = await bundleWorkflowsInto(mkdtempSync(join(tmpdir(), 'switchboard-test-')));

  project.provide('temporalAddress', server.address);
  project.provide('temporalCli', cli);
  project.provide('workflowBundlePath', workflowBundlePath);
  project.provide('testDatabaseUrl', testDatabaseUrl);
  return async () => {
    await server.stop();
  };
}
