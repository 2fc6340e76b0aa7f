import type { Request, Response } from 'express';
import type { BrowserVisit } from '../../../features/connections/browser-visit.js';
import type { StepAnswer } from '../../../features/connections/step-answer.js';
import type { ServiceContext } from '../../../features/context.js';
import { startCookieCapture } from '../../portal/cookie-capture/router.js';
import { messagePage, notAllowedPage } from '../../portal/html.js';
import { readPortalUser } from '../../portal/session-cookie.js';
import { toSignIn } from '../../portal/signed-in.js';

/** This request as a connection step sees it: who is signed in to the portal is read fresh, when the step asks. */
export const browserVisit = (ctx: ServiceContext, req: Request, res: Response): BrowserVisit => ({
  req,
  res,
  signedInUser: () => readPortalUser(ctx, req),
});

/** Renders a connection step's answer: its page, the portal's sign-in, or the next hop. */
export async function sendStepAnswer(ctx: ServiceContext, req: Request, res: Response, answer: StepAnswer): Promise<void> {
  switch (answer.kind) {
    case 'page':
      res.status(answer.status).send(messagePage(answer.title, answer.message, answer.tone));
      return;
    case 'not-allowed':
      res.status(403).send(notAllowedPage(answer.reason, 'Nothing was connected.'));
      return;
    case 'sign-in':
      toSignIn(res, req.originalUrl);
      return;
    case 'redirect':
      res.redirect(303, answer.url);
      return;
    case 'cookie-capture':
      return startCookieCapture(ctx, res, answer.attempt);
  }
}
