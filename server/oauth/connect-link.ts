import type { Request, Response } from 'express';
import { oauthCallbackUrl } from '../../core/urls.js';
import { buildConsentUrl } from '../../providers/oauth-client.js';
import { getAttempt, recordAuthorizationRequest } from '../../store/connection-attempts.js';
import type { ServiceContext } from '../context.js';
import { startCookieCapture } from '../portal/cookie-capture/router.js';
import { messagePage } from '../portal/html.js';
import { readPortalUser } from '../portal/session.js';

/**
 * GET /connect/:integration?t=… — the link an agent hands its user. The signed-in human must be
 * the user the link was made for; only then is the provider's consent URL built (fresh state
 * and PKCE for every visit) and the browser sent there.
 */
export async function handleConnectLink(ctx: ServiceContext, req: Request, res: Response): Promise<void> {
  const token = typeof req.query.t === 'string' ? req.query.t : '';
  const claims = token ? await ctx.signer.verify('connect-link', token) : undefined;
  if (!claims || typeof claims.a !== 'string' || typeof claims.u !== 'string' || typeof claims.t !== 'string') {
    res
      .status(400)
      .send(messagePage('Link not valid', 'This connect link is invalid or has expired. Ask your agent for a new one.', 'bad'));
    return;
  }
  const human = await readPortalUser(ctx, req);
  if (!human) {
    res.redirect(303, `/portal/login?next=${encodeURIComponent(req.originalUrl)}`);
    return;
  }
  if (human.userId !== claims.u || human.tenantId !== claims.t) {
    res
      .status(403)
      .send(
        messagePage(
          'Wrong account',
          'This link was made for a different Switchboard user than the one signed in here. Sign out and sign in as the user your agent works for, or ask the agent for a new link.',
          'bad',
        ),
      );
    return;
  }
  const attempt = await getAttempt(ctx.pool, claims.a);
  if (!attempt || attempt.userId !== human.userId || attempt.integration !== req.params.integration) {
    res.status(400).send(messagePage('Link not valid', 'This connect link does not match a connection attempt.', 'bad'));
    return;
  }
  if (attempt.status === 'CONNECTED') {
    res.send(messagePage('Already connected', `This ${attempt.integration} connection is complete. You can close this window.`, 'ok'));
    return;
  }
  if (attempt.status !== 'PENDING') {
    res
      .status(410)
      .send(
        messagePage(
          'Link expired',
          'This connection attempt has expired. Ask your agent to start again; it will give you a new link.',
          'bad',
        ),
      );
    return;
  }
  if (attempt.authMode === 'cookie') return startCookieCapture(ctx, res, attempt);
  const endpoints = ctx.registry.oauth2(attempt.integration);
  if (attempt.authMode !== 'oauth2' || !endpoints) {
    res.status(400).send(messagePage('Cannot connect here', `${attempt.integration} is not connected through this link.`, 'bad'));
    return;
  }
  const request = await buildConsentUrl(endpoints, oauthCallbackUrl(ctx.config));
  if (!(await recordAuthorizationRequest(ctx.pool, ctx.keyring, attempt.id, request))) {
    res.status(410).send(messagePage('Link expired', 'This connection attempt has expired. Ask your agent to start again.', 'bad'));
    return;
  }
  res.redirect(303, request.url.toString());
}
