// `npm run replay -- <workflowId> [runId]`: fetches a live history and replays it against the
// current workflow code, printing a verdict. Exit 0 deterministic, 1 not, 2 bad usage.
import { Client, Connection } from '@temporalio/client';
import { replayHistories } from './support/replay.js';
import { configFromEnv, requireSecrets, temporalAddress } from './support/services.js';

const [workflowId, runId] = process.argv.slice(2);
if (!workflowId || workflowId.startsWith('-')) {
  process.stderr.write('usage: npm run replay -- <workflowId> [runId]\n');
  process.exit(2);
}
const config = configFromEnv();
const { keyring } = requireSecrets(config);
const connection = await Connection.connect({ address: temporalAddress(config) });
try {
  const client = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });
  const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
  const [verdict] = await replayHistories([{ workflowId, history }], { keyring });
  if (verdict.ok) {
    process.stdout.write(`✔ ${workflowId}: replays deterministically with the current code (${history.events?.length ?? 0} events)\n`);
  } else {
    process.stdout.write(`✘ ${workflowId}: the current code does not replay this history\n  ${verdict.error}\n`);
    process.exitCode = 1;
  }
} catch (err) {
  process.stderr.write(`replay: ${(err as Error).message}\n`);
  process.exitCode = 1;
} finally {
  await connection.close();
}
