// Production entry point: Switchboard's Temporal worker.
import { configFromEnv, createWorker, openServices } from './support/services.js';

const config = configFromEnv();
const services = await openServices(config);
const worker = await createWorker(services);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => worker.shutdown());
services.logger.info({ taskQueue: config.TEMPORAL_TASK_QUEUE }, 'worker running');
await worker.run();
await services.close();
