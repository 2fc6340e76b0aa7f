import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import type { ServiceContext } from '../../features/context.js';
import { httpRequests } from '../../platform/telemetry/metrics.js';

declare module 'express-serve-static-core' {
  interface Request {
    requestId?: string;
    log?: Logger;
  }
}

const SAFE_ID = /^[A-Za-z0-9._:-]{1,100}$/;

/**
 * A request id on every request (the caller's `x-request-id` when sane, else a new one), echoed
 * in the response; one JSON log line per request with caller and tenant; latency metrics by
 * route. Only the path is logged — never the query string, which may hold a code or token.
 */
export function requestLog(ctx: ServiceContext) {
  return (req: Request, res: Response, next: NextFunction) => {
    const offered = req.get('x-request-id');
    const requestId = offered && SAFE_ID.test(offered) ? offered : randomUUID();
    req.requestId = requestId;
    req.log = ctx.logger.child({ requestId });
    res.set('x-request-id', requestId);
    const started = performance.now();
    res.once('finish', () => {
      const durationMs = performance.now() - started;
      const route = req.route?.path ? `${req.baseUrl}${req.route.path}` : 'unmatched';
      httpRequests.observe({ method: req.method, route, status: String(res.statusCode) }, durationMs / 1000);
      req.log?.info(
        {
          method: req.method,
          path: req.originalUrl.split('?')[0],
          status: res.statusCode,
          durationMs: Math.round(durationMs),
          tenantId: req.caller?.tenantId,
          userId: req.caller?.userId,
        },
        'request',
      );
    });
    next();
  };
}
