// Production entry point: the HTTP service (MCP, JSON API, OAuth callback, portal).

import { listen } from './support/listen.js';
import { configFromEnv, openServices } from './support/services.js';

const config = configFromEnv();
const services = await openServices(config);
const server = await listen(services);
const stop = async () => {
  await server.close();
  await services.close();
};
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void stop());
