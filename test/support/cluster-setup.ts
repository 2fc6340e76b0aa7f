import { createWriteStream, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startTemporalServer } from '../../bin/support/temporal-server.js';
import { ensureDatabase } from '../../platform/database/database.js';
import { TEMPORAL_SERVER_VERSION } from '../../scripts/setup.mjs';
import { bundleWorkflowsInto, findTemporalCli, findTemporalServer } from './infra.js';

/** Each stack of `npm run test:cluster`: two HTTP server processes behind a load balancer, two worker processes. */
export const CLUSTER_PROCESSES = { servers: 2, workers: 2 };

/**
 * Once per `npm run test:cluster` (vitest.cluster.config.ts): the Temporal server itself on
 * PostgreSQL persistence and visibility (databases of its own, dropped afterwards), configured as
 * docker-compose.yml configures it, instead of the dev server; every stack runs as separate processes.
 */
export default async function setup(project: TestProject) {
  const dir = mkdtempSync(join(tmpdir(), 'switchboard-cluster-'));
  const testDatabaseUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/switchboard_test';
  await ensureDatabase(testDatabaseUrl);

  // The server's own log (warnings and up) goes to a file: it is noisy at start and stop by design.
  const logPath = join(dir, 'temporal-server.log');
  const log = createWriteStream(logPath);
  const cli = findTemporalCli();
  const server = await startTemporalServer({
    binDir: findTemporalServer(),
    cli,
    databaseUrl: testDatabaseUrl,
    log: (line) => log.write(`${line}\n`),
  });
  console.log(
    `Temporal server ${TEMPORAL_SERVER_VERSION} at ${server.address} on PostgreSQL (databases ${server.databases.main}, ${server.databases.visibility}); its log: ${logPath}`,
  );
  const workflowBundlePath = await bundleWorkflowsInto(dir);

  project.provide('temporalAddress', server.address);
  project.provide('temporalCli', cli);
  project.provide('workflowBundlePath', workflowBundlePath);
  project.provide('testDatabaseUrl', testDatabaseUrl);
  project.provide('stackProcesses', CLUSTER_PROCESSES);
  return async () => {
    await server.stop();
    log.end();
  };
}
