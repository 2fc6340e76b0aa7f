import cookieParser from 'cookie-parser';
import express, { type NextFunction, type Request, type Response } from 'express';
import helmet from 'helmet';
import { MetaToolError } from '../../core/errors.js';
import type { ServiceContext } from '../../features/context.js';
import { runMetaTool } from '../../features/meta-tool.js';
import { httpToolByName } from '../../features/meta-tools.js';
import { mcpRouter } from '../mcp/endpoint.js';
import { keyTestLimit } from '../portal/apikey-test-call.js';
import { cookieCaptureRouter } from '../portal/cookie-capture/router.js';
import { messagePage } from '../portal/html.js';
import { keyTestGate } from '../portal/key-test-gate.js';
import { noStore } from '../portal/no-store.js';
import { portalRouter } from '../portal/portal-router.js';
import { refuseCrossSiteWrites } from '../portal/same-origin-writes.js';
import { perKeyRateLimit, requireApiKey } from './auth.js';
import { codecRouter } from './codec-endpoint.js';
import { readiness } from './health.js';
import { hostOriginGuard } from './host-origin-guard.js';
import { handleOAuthCallback } from './oauth/callback.js';
import { serveClientMetadata } from './oauth/client-metadata.js';
import { handleConnectLink } from './oauth/connect-link.js';
import { buildOpenApiDocument } from './openapi-document.js';
import { requestLog } from './request-log.js';
import { refuseNulInAddress, sendRequestError } from './request-text-guard.js';

/** Helmet's headers on every answer, with the portal's content security policy. */
const securityHeaders = helmet({
  contentSecurityPolicy: {
    directives: {
      defaultSrc: ["'self'"],
      styleSrc: ["'self'", "'unsafe-inline'"],
      imgSrc: ["'self'", 'data:'],
      formAction: ["'self'"],
      frameAncestors: ["'none'"],
    },
  },
  // Not helmet's `no-referrer`: under it a browser sends `Origin: null` even on our own forms'
  // posts, and the Host/Origin guard and the portal's cross-site check could not tell them from
  // another site's. `same-origin` still sends no Referer to any other site (connect links stay private).
  referrerPolicy: { policy: 'same-origin' },
});

export function createApp(ctx: ServiceContext): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', false);
  app.use(securityHeaders);
  app.use(requestLog(ctx));
  // Before every route: a foreign Host or Origin (DNS rebinding, other sites) reaches none of them.
  app.use(hostOriginGuard(ctx));
  // No route sees U+0000 in its path or query string (request-text-guard.ts).
  app.use(refuseNulInAddress);
  app.use(cookieParser());
  // A user's or tenant's key submissions beyond their bound are answered here, before any route's work.
  const keyTests = keyTestLimit();
  app.post('/portal/integrations/:name', keyTestGate(ctx, keyTests));

  // /metrics is on the operator port (surfaces/operator/operator-app.ts), not here.
  app.get('/healthz', (_req, res) => res.json({ ok: true }));
  app.get('/readyz', (req: Request, res: Response) => readiness(ctx, req, res));
  app.get('/openapi.json', (_req, res) => res.json(buildOpenApiDocument(ctx.config)));

  const limiter = perKeyRateLimit(ctx);
  const api = express.Router();
  // Not strict: a body of null, a string or a number reaches the route, which names the problem.
  api.use(express.json({ limit: '1mb', strict: false }));
  api.use(requireApiKey(ctx));
  api.use(limiter);
  api.post(
    '/tools/:name',
    // Express 5 hands an async handler's rejection to the error middleware below.
    async (req: Request, res: Response) => {
      const tool = httpToolByName.get(String(req.params.name));
      if (!tool) return res.status(404).json({ error: `No tool named ${req.params.name}` });
      const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
      if (hasBody && !req.is('application/json')) return res.status(415).json({ error: 'Content-Type must be application/json' });
      const body: unknown = req.body;
      if (body !== undefined && (typeof body !== 'object' || body === null || Array.isArray(body))) {
        const got = body === null ? 'null' : Array.isArray(body) ? 'an array' : `a ${typeof body}`;
        return res.status(400).json({ error: `The request body must be a JSON object of the tool's arguments, not ${got}` });
      }
      res.json(await runMetaTool(tool, ctx, req.caller!, req.body));
    },
  );
  api.all('/tools/:name', (req: Request, res: Response) => {
    res.set('Allow', 'POST');
    res.status(405).json({ error: `${req.method} is not allowed on /v1/tools/${req.params.name}; use POST` });
  });
  app.use('/v1', api);

  app.use(codecRouter(ctx));
  app.use(mcpRouter(ctx, [requireApiKey(ctx), limiter]));

  // Routes a browser's session cookie authenticates: no state change from another site's page (finding 9).
  app.use(['/portal', '/connect', '/oauth'], refuseCrossSiteWrites(ctx));
  // Pages that depend on who is signed in stay out of every cache (Back after sign-out shows nothing).
  app.use(['/portal', '/connect', '/oauth'], noStore);
  app.get('/connect/:integration', (req: Request, res: Response) => handleConnectLink(ctx, req, res));
  app.get('/oauth/callback', (req: Request, res: Response) => handleOAuthCallback(ctx, req, res));
  // A discovered authorization server's own callback (core/urls.ts issuerCallbackUrl).
  app.get('/oauth/callback/:issuerKey', (req: Request, res: Response) => handleOAuthCallback(ctx, req, res));
  app.get('/oauth/client-metadata.json', serveClientMetadata(ctx.config));
  app.use(portalRouter(ctx, keyTests));
  app.use(cookieCaptureRouter(ctx));

  app.use((req: Request, res: Response) => {
    if (req.accepts(['json', 'html']) === 'html' && req.method === 'GET') {
      return res.status(404).send(messagePage('Not found', 'There is no page here.', 'bad'));
    }
    res.status(404).json({ error: `No route for ${req.method} ${req.path}` });
  });

  app.use(answerError(ctx));
  return app;
}

/**
 * The answer to an error no route answered: a tool's refusal as it is, a client's mistake as a 4xx
 * (a browser's form gets the portal's page), Postgres being away as a 503 to retry, and anything
 * else a 500 whose details only the log has.
 */
function answerError(ctx: ServiceContext) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    if (err instanceof MetaToolError) return res.status(err.status).set(err.headers).json(err.body);
    const e = err as { type?: string; status?: number; message?: string };
    if (e.type === 'entity.parse.failed') return res.status(400).json({ error: 'Malformed JSON body' });
    // A browser's form gets the portal's page, an API client its JSON (sendRequestError).
    if (e.type === 'entity.too.large') return sendRequestError(req, res, 413, 'Too large', 'Request body too large');
    if (e.status && e.status >= 400 && e.status < 500)
      return sendRequestError(req, res, e.status, 'Bad request', e.message ?? 'Bad request');
    if (isDatabaseUnavailable(err)) {
      ctx.logger.warn({ err: (err as Error).message, path: req.path }, 'database unavailable');
      return res.status(503).json({ error: 'The database is unavailable right now; try again shortly' });
    }
    ctx.logger.error({ err, path: req.path }, 'unhandled error');
    res.status(500).json({ error: 'Internal error; the server logged the details' });
  };
}

/**
 * Postgres down, restarting or unreachable (SQLSTATE class 08 connection exception or 57P operator
 * intervention, a refused or reset socket, the pool's connect timeout): the caller's to retry, a 503.
 */
function isDatabaseUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (typeof e?.code === 'string' && (/^(08|57P0)/.test(e.code) || e.code === 'ECONNREFUSED' || e.code === 'ECONNRESET')) return true;
  return typeof e?.message === 'string' && /^(Connection terminated|timeout exceeded when trying to connect)/.test(e.message);
}
