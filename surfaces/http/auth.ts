import type { NextFunction, Request, Response } from 'express';
import { rateLimit } from 'express-rate-limit';
import type { Caller } from '../../core/caller.js';
import { authenticateApiKey } from '../../features/accounts/store/api-keys.js';
import type { ServiceContext } from '../../features/context.js';
import { resolveDelegation } from '../../features/sources/delegation.js';

declare module 'express-serve-static-core' {
  interface Request {
    caller?: Caller;
  }
}

/** Bearer API-key authentication. The caller's identity comes from the key, never from arguments. */
export function requireApiKey(ctx: ServiceContext) {
  return async (req: Request, res: Response, next: NextFunction) => {
    const header = req.headers.authorization ?? '';
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    const caller = match ? await authenticateApiKey(ctx.pool, match[1]) : undefined;
    if (!caller) {
      const error = match ? 'invalid_token' : 'invalid_request';
      res
        .status(401)
        .set('WWW-Authenticate', `Bearer realm="switchboard", error="${error}"`)
        .json({ error: match ? 'The API key is not valid or was revoked' : 'Missing Authorization: Bearer <api key>' });
      return;
    }
    // A source key acts for the user its signed assertion names (features/sources/delegation.ts).
    const delegation = await resolveDelegation(ctx, caller, req);
    if ('refused' in delegation) {
      res.status(401).set('WWW-Authenticate', 'Bearer realm="switchboard", error="invalid_token"').json({ error: delegation.refused });
      return;
    }
    req.caller = delegation.caller;
    next();
  };
}

/**
 * Per-API-key request limit with the standard RateLimit headers: a cheap first line against
 * request floods, kept in this process's memory. One instance per app, so the JSON API and MCP
 * draw from the same allowance. Work is limited elsewhere: tool calls are counted per key and per
 * tenant, a batch by its number of calls, in Postgres for every process alike
 * (features/execution/batch/call-limits.ts).
 */
export function perKeyRateLimit(ctx: ServiceContext) {
  return rateLimit({
    windowMs: 60_000,
    limit: ctx.config.RATE_LIMIT_PER_MINUTE,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    keyGenerator: (req) => req.caller?.keyId ?? 'anonymous',
    handler: (_req, res) => res.status(429).json({ error: 'Too many requests for this API key; retry after the time in RateLimit' }),
  });
}
