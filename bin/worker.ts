// Production entry point: Switchboard's Temporal worker.
import { listenOperator } from './support/listen.js';
import { configFromEnv, createWorker, openServices } from './support/services.js';

const config = configFromEnv();
const services = await openServices(config);
const worker = await createWorker(services);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => worker.shutdown());
// The operator port (METRICS_PORT): this process's /metrics, /healthz and /readyz.
const operator = config.METRICS_PORT ? await listenOperator(services) : undefined;
services.logger.info({ taskQueue: config.TEMPORAL_TASK_QUEUE, metricsPort: config.METRICS_PORT }, 'worker running');
await worker.run();
operator?.server.close();
await services.close();
