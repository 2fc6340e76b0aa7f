// The example app's own worker: its workflows and activities, on its own task queue.
import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker } from '@temporalio/worker';
import { SwitchboardPlugin } from '../../surfaces/temporal-plugin/index.js';
import * as activities from './activities.js';

const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233' });
const worker = await Worker.create({
  connection,
  namespace: process.env.TEMPORAL_NAMESPACE ?? 'default',
  taskQueue: process.env.AGENT_TASK_QUEUE ?? 'agent-example',
  workflowsPath: fileURLToPath(new URL('./workflows.ts', import.meta.url)),
  activities,
  // Switchboard encrypts the payloads its activities and workflows exchange with yours.
  plugins: [SwitchboardPlugin.fromEnv()],
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => worker.shutdown());
console.log('agent worker running');
await worker.run();
await connection.close();
