import type { Request, Response } from 'express';
import { openConnectLink } from '../../../features/connections/connect-link.js';
import type { ServiceContext } from '../../../features/context.js';
import { browserVisit, sendStepAnswer } from './step-answer.js';

/** GET /connect/:integration?t=… — the connect link (features/connections/connect-link.ts), rendered. */
export async function handleConnectLink(ctx: ServiceContext, req: Request, res: Response): Promise<void> {
  await sendStepAnswer(ctx, req, res, await openConnectLink(ctx, browserVisit(ctx, req, res)));
}
