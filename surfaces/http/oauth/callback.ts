import type { Request, Response } from 'express';
import { finishOAuthCallback } from '../../../features/connections/oauth-callback.js';
import type { ServiceContext } from '../../../features/context.js';
import { browserVisit, sendStepAnswer } from './step-answer.js';

/** GET /oauth/callback and /oauth/callback/<issuer key> — the end of an OAuth connection (features/connections/oauth-callback.ts), rendered. */
export async function handleOAuthCallback(ctx: ServiceContext, req: Request, res: Response): Promise<void> {
  await sendStepAnswer(ctx, req, res, await finishOAuthCallback(ctx, browserVisit(ctx, req, res)));
}
