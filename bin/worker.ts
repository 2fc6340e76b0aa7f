// Production entry point: Switchboard's Temporal worker.
import { createServer } from 'node:http';
import { registry } from '../telemetry/metrics.js';
import { configFromEnv, createWorker, openServices } from './support/services.js';

const config = configFromEnv();
const services = await openServices(config);
const worker = await createWorker(services);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => worker.shutdown());
const metrics =
  config.WORKER_METRICS_PORT &&
  createServer(async (req, res) => {
    if (req.url !== '/metrics') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': registry.contentType }).end(await registry.metrics());
  }).listen(config.WORKER_METRICS_PORT, config.HOST);
services.logger.info({ taskQueue: config.TEMPORAL_TASK_QUEUE, metricsPort: config.WORKER_METRICS_PORT }, 'worker running');
await worker.run();
if (metrics) metrics.close();
await services.close();
