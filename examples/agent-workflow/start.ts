// Starts the example workflow for a user and prints its result when it ends.
import { Client, Connection } from '@temporalio/client';
import { SwitchboardPlugin } from '../../surfaces/temporal-plugin/index.js';
import { DIGEST_CALLS, type DigestIntegration, digest } from './workflows.js';

const [tenantId, userId, chosen] = process.argv.slice(2);
if (!tenantId || !userId || (chosen && !(chosen in DIGEST_CALLS))) {
  console.error(`usage: node --import tsx examples/agent-workflow/start.ts <tenantId> <userId> [${Object.keys(DIGEST_CALLS).join('|')}]`);
  process.exit(2);
}
// GitHub when this machine's Switchboard has a GitHub OAuth client (the same environment), else the demo.
const integration = (chosen ?? (process.env.GITHUB_CLIENT_ID ? 'github' : 'demo')) as DigestIntegration;
const client = new Client({
  connection: await Connection.connect({ address: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233' }),
  plugins: [SwitchboardPlugin.fromEnv()],
});
const handle = await client.workflow.start(digest, {
  workflowId: `digest-${integration}-${userId}-${Date.now()}`,
  taskQueue: process.env.AGENT_TASK_QUEUE ?? 'agent-example',
  // Switchboard's own task queue, when it is not the default `switchboard`.
  args: [{ tenantId, userId, integration, switchboardTaskQueue: process.env.TEMPORAL_TASK_QUEUE }],
});
console.log(`started ${handle.workflowId} (${integration}); waiting — open the link the worker prints when it asks to connect…`);
console.log(JSON.stringify(await handle.result(), null, 2));
