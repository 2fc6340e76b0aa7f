import type { Payload } from '@temporalio/common';
import express, { type NextFunction, type Request, type Response, Router } from 'express';
import { z } from 'zod';
import type { ServiceContext } from '../../features/context.js';
import { KeyringPayloadCodec } from '../../platform/temporal/payload-codec.js';
import { CODEC_BODY_LIMIT } from './body-limits.js';
import { type CodecCaller, codecCallerOf } from './codec-access.js';
import { resolveStoredResultsInPayloads } from './codec-results.js';

/**
 * The codec endpoint Temporal UI calls to show Switchboard's encrypted payloads as JSON:
 * POST /codec/decode and /codec/encode with `{payloads: [{metadata, data}]}` (base64 values).
 * CORS admits only the configured UI origins; callers must be codec operators (codec-access.ts:
 * set by the operator's environment, not by any tenant role) unless CODEC_AUTH=none. Encoding is
 * off unless CODEC_ALLOW_ENCODE=true: a sealed payload is what Switchboard's worker trusts as
 * input, so /codec/encode would otherwise be a way to forge it. Every use is logged (who, which
 * direction, how many payloads; never their contents). Decoding also puts stored tool results
 * back in place of their references (codec-results.ts).
 */

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

  // Who is calling is settled before the body is read: an unauthorised caller costs no 4 MB parse.
  const authorise = (direction: 'decode' | 'encode') => async (req: Request, res: Response, next: NextFunction) => {
    const caller = await codecCallerOf(ctx, req);
    if (caller.kind === 'anonymous') {
      res
        .status(401)
        .set('WWW-Authenticate', 'Bearer realm="switchboard-codec"')
        .json({ error: 'The codec endpoint needs a codec operator credential (an API key or portal session)' });
      return;
    }
    if (caller.kind === 'refused') {
      ctx.logger.warn({ codec: { direction, userId: caller.userId } }, 'codec use refused: not a codec operator');
      res.status(403).json({ error: 'Only codec operators (CODEC_OPERATOR_TENANT and CODEC_OPERATORS) may use the codec endpoint' });
      return;
    }
    if (direction === 'encode' && !ctx.config.CODEC_ALLOW_ENCODE) {
      ctx.logger.warn({ codec: { direction, ...who(caller) } }, 'codec encode refused: CODEC_ALLOW_ENCODE is off');
      res.status(403).json({
        error: "Encoding is disabled (CODEC_ALLOW_ENCODE=false): sealed payloads are what Switchboard's worker accepts as input",
      });
      return;
    }
    res.locals.codecCaller = caller;
    next();
  };

  const handle = (direction: 'decode' | 'encode') => async (req: Request, res: Response) => {
    const caller = res.locals.codecCaller as Exclude<CodecCaller, { kind: 'anonymous' | 'refused' }>;
    const parsed = jsonPayloads.safeParse(req.body);
    if (!parsed.success) {
      res.status(400).json({ error: 'Expected {"payloads": [{"metadata": {…base64}, "data": "…base64"}]}' });
      return;
    }
    const payloads = parsed.data.payloads.map(fromJson);
    const use = { direction, payloads: payloads.length, namespace: req.get('x-namespace')?.slice(0, 100), ...who(caller) };
    try {
      const out = direction === 'decode' ? await codec.decode(payloads) : await codec.encode(payloads);
      // Stored results are put back for the same callers, so the UI shows every call's result.
      const resolved =
        direction === 'decode'
          ? await resolveStoredResultsInPayloads(ctx, out).catch((err: Error) => {
              // The payloads still decode; the UI shows the references instead of the results.
              ctx.logger.warn({ codec: use, err: err.message }, 'codec decode could not read stored results');
              return 0;
            })
          : 0;
      ctx.logger.info({ codec: resolved ? { ...use, storedResults: resolved } : use }, `codec ${direction}`);
      res.json({ payloads: out.map(toJson) });
    } catch (err) {
      ctx.logger.warn({ codec: use, err: (err as Error).message }, `codec ${direction} failed`);
      res.status(400).json({ error: `Could not ${direction} the payloads (unknown key or tampered data)` });
    }
  };

  const body = express.json({ limit: CODEC_BODY_LIMIT });
  router.post('/codec/decode', authorise('decode'), body, handle('decode'));
  router.post('/codec/encode', authorise('encode'), body, handle('encode'));
  return router;
}

/** Who used the codec, for the log line (CODEC_AUTH=none: nobody known). */
const who = (caller: Exclude<CodecCaller, { kind: 'anonymous' | 'refused' }>) =>
  caller.kind === 'operator' ? { userId: caller.userId, via: caller.via } : { userId: null, via: 'CODEC_AUTH=none' };
