import express, { type Request, type Response } from 'express';
import { isOperatorHost } from '../../core/own-origins.js';
import type { ServiceContext } from '../../features/context.js';
import { registry } from '../../platform/telemetry/metrics.js';
import { readiness } from '../http/health.js';

/**
 * The operator port (METRICS_PORT on METRICS_HOST, loopback by default): this process's metrics
 * and health, for Prometheus and probes, never on the public service port. No page of ours calls
 * it, so any request carrying an Origin is refused, and so is any Host that is not an IP literal,
 * localhost or in ALLOWED_HOSTS (a rebound page shows its own DNS name).
 */
export function createOperatorApp(ctx: ServiceContext): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.use((req: Request, res: Response, next) => {
    if (!isOperatorHost(ctx.config, req.headers.host)) {
      return void res.status(421).json({ error: 'The operator port answers for IP addresses, localhost and ALLOWED_HOSTS only' });
    }
    if (req.headers.origin !== undefined) return void res.status(403).json({ error: 'The operator port does not answer web pages' });
    next();
  });
  app.get('/metrics', async (_req, res) => {
    res.set('content-type', registry.contentType).send(await registry.metrics());
  });
  app.get('/healthz', (_req, res) => res.json({ ok: true }));
  app.get('/readyz', (req: Request, res: Response) => readiness(ctx, req, res));
  app.use((req: Request, res: Response) => res.status(404).json({ error: `No route for ${req.method} ${req.path} on the operator port` }));
  return app;
}
