import { timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { ServiceContext } from '../../features/context.js';
import { messagePage } from './html.js';
import { sessionCookieValue } from './session-cookie.js';

/**
 * CSRF protection for the portal's forms: a token derived from the session cookie with a
 * server-side key (synchroniser token without server state). A forged cross-site form carries no
 * valid token, because the attacker cannot read the session cookie.
 */

/** The key is derived from the signer's secret (which refuses to exist without a real one). */
function tokenFor(ctx: ServiceContext, session: string): string {
  return ctx.signer.mac('portal-csrf', session);
}

/** The token to put in a form (`<input type="hidden" name="_csrf">`) or an `x-csrf-token` header. */
export function csrfToken(ctx: ServiceContext, req: Request): string {
  const session = sessionCookieValue(ctx, req);
  return session !== undefined ? tokenFor(ctx, session) : '';
}

/** Refuses a state-changing request without the session's token (403, nothing done). */
export function requireCsrf(ctx: ServiceContext) {
  return (req: Request, res: Response, next: NextFunction) => {
    const session = sessionCookieValue(ctx, req);
    const sent = (typeof req.body?._csrf === 'string' && req.body._csrf) || req.get('x-csrf-token') || '';
    const expected = session !== undefined ? tokenFor(ctx, session) : '';
    const ok = expected.length > 0 && sent.length === expected.length && timingSafeEqual(Buffer.from(sent), Buffer.from(expected));
    if (!ok) {
      res
        .status(403)
        .send(messagePage('Request refused', 'This form expired or did not come from the portal. Reload the page and try again.', 'bad'));
      return;
    }
    next();
  };
}
