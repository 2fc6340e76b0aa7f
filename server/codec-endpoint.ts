import type { Payload } from '@temporalio/common';
import express, { type NextFunction, type Request, type Response, Router } from 'express';
import { z } from 'zod';
import { KeyringPayloadCodec } from '../plugin/payload-codec.js';
import { authenticateApiKey } from '../store/api-keys.js';
import { getUser } from '../store/users.js';
import type { ServiceContext } from './context.js';
import { readPortalUser } from './portal/session.js';

/**
 * The codec endpoint Temporal UI calls to show Switchboard's encrypted payloads as JSON:
 * POST /codec/decode and /codec/encode with `{payloads: [{metadata, data}]}` (base64 values).
 * CORS admits only the configured UI origins; callers must be operators (an API key or a portal
 * session of a user with the `operator` role) unless CODEC_AUTH=none.
 */

export const OPERATOR_ROLE = 'operator';

const jsonPayloads = z.object({
  payloads: z.array(z.object({ metadata: z.record(z.string(), z.string()).optional(), data: z.string().optional() })).max(10_000),
});

const fromJson = (p: { metadata?: Record<string, string>; data?: string }): Payload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
  data: p.data === undefined ? undefined : Buffer.from(p.data, 'base64'),
});

const toJson = (p: Payload) => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? []).toString('base64')])),
  data: Buffer.from(p.data ?? []).toString('base64'),
});

export function uiOrigins(ctx: ServiceContext): string[] {
  const configured = ctx.config.TEMPORAL_UI_ORIGINS?.split(',').map((o) => o.trim().replace(/\/$/, ''));
  const port = ctx.config.TEMPORAL_UI_PORT;
  return configured?.filter(Boolean) ?? [`http://localhost:${port}`, `http://127.0.0.1:${port}`];
}

export function codecRouter(ctx: ServiceContext): Router {
  const router = Router();
  const codec = new KeyringPayloadCodec(ctx.keyring);
  const origins = new Set(uiOrigins(ctx));

  router.use('/codec', (req: Request, res: Response, next: NextFunction) => {
    const origin = req.get('origin');
    if (origin && origins.has(origin)) {
      res.set({
        'Access-Control-Allow-Origin': origin,
        'Access-Control-Allow-Credentials': 'true',
        'Access-Control-Allow-Methods': 'POST, OPTIONS',
        'Access-Control-Allow-Headers': 'content-type, authorization, x-namespace',
        'Access-Control-Max-Age': '600',
        Vary: 'Origin',
      });
    } else if (origin) {
      res.status(403).json({ error: `Origin ${origin} may not call the codec endpoint (TEMPORAL_UI_ORIGINS)` });
      return;
    }
    if (req.method === 'OPTIONS') {
      res.status(204).end();
      return;
    }
    next();
  });

  const requireOperator = async (req: Request, res: Response, next: NextFunction) => {
    if (ctx.config.CODEC_AUTH === 'none') return next();
    const key = /^Bearer\s+(\S+)$/i.exec(req.get('authorization') ?? '')?.[1];
    const caller = key ? await authenticateApiKey(ctx.pool, key) : undefined;
    const human = caller ? undefined : await readPortalUser(ctx, req);
    const roles = caller?.roles ?? (human ? ((await getUser(ctx.pool, human.userId))?.roles ?? []) : undefined);
    if (!roles) {
      res
        .status(401)
        .set('WWW-Authenticate', 'Bearer realm="switchboard-codec"')
        .json({ error: 'The codec endpoint needs an operator credential' });
      return;
    }
    if (!roles.includes(OPERATOR_ROLE)) {
      res.status(403).json({ error: 'Only users with the operator role may read payloads' });
      return;
    }
    next();
  };

  const handle = (direction: 'decode' | 'encode') => async (req: Request, res: Response) => {
    const parsed = jsonPayloads.safeParse(req.body);
    if (!parsed.success) {
      res.status(400).json({ error: 'Expected {"payloads": [{"metadata": {…base64}, "data": "…base64"}]}' });
      return;
    }
    const payloads = parsed.data.payloads.map(fromJson);
    try {
      const out = direction === 'decode' ? await codec.decode(payloads) : await codec.encode(payloads);
      res.json({ payloads: out.map(toJson) });
    } catch (err) {
      ctx.logger.warn({ err: (err as Error).message }, `codec ${direction} failed`);
      res.status(400).json({ error: `Could not ${direction} the payloads (unknown key or tampered data)` });
    }
  };

  const body = express.json({ limit: '4mb' });
  router.post('/codec/decode', body, requireOperator, handle('decode'));
  router.post('/codec/encode', body, requireOperator, handle('encode'));
  return router;
}
