// Starts the example workflow for a user and prints its result when it ends.
import { Client, Connection } from '@temporalio/client';
import { SwitchboardPlugin } from '../../plugin/index.js';
import { repoDigest } from './workflows.js';

const [tenantId, userId] = process.argv.slice(2);
if (!tenantId || !userId) {
  console.error('usage: node --import tsx examples/agent-workflow/start.ts <tenantId> <userId>');
  process.exit(2);
}
const client = new Client({
  connection: await Connection.connect({ address: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233' }),
  plugins: [SwitchboardPlugin.fromEnv()],
});
const handle = await client.workflow.start(repoDigest, {
  workflowId: `repo-digest-${userId}-${Date.now()}`,
  taskQueue: process.env.AGENT_TASK_QUEUE ?? 'agent-example',
  args: [{ tenantId, userId }],
});
console.log(`started ${handle.workflowId}; waiting (open the link your webhook receives)…`);
console.log(JSON.stringify(await handle.result(), null, 2));
