import type { Request, Response } from 'express';
import { whyMayNotConnect } from '../../activities/prepare-connection.js';
import { oauthCallbackUrl } from '../../core/urls.js';
import { buildConsentUrl } from '../../providers/oauth-client.js';
import { countOpenConsentRequests, getAttempt, isOpenAttempt, recordAuthorizationRequest } from '../../store/connection-attempts.js';
import { bindBrowser } from '../connections/browser-binding.js';
import { WRONG_ACCOUNT } from '../connections/flow-owner.js';
import type { ServiceContext } from '../context.js';
import { startCookieCapture } from '../portal/cookie-capture/router.js';
import { messagePage, notAllowedPage } from '../portal/html.js';
import { readPortalUser } from '../portal/session-cookie.js';
import { CONSENT_REQUEST_TTL_SEC, MAX_OPEN_CONSENT_REQUESTS, oauthStateBinding } from './state-binding.js';

/**
 * GET /connect/:integration?t=… — the link an agent hands its user. The signed-in human must be
 * the user the link was made for, and may still connect it (roles read now); only then is the
 * provider's consent URL built (fresh state and PKCE for every visit), this browser bound to the
 * state (a cookie only the callback receives), and the browser sent there.
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
    res.status(WRONG_ACCOUNT.status).send(messagePage(WRONG_ACCOUNT.title, WRONG_ACCOUNT.message, 'bad'));
    return;
  }
  const attempt = await getAttempt(ctx.pool, claims.a);
  if (
    !attempt ||
    attempt.userId !== human.userId ||
    attempt.tenantId !== human.tenantId ||
    attempt.integration !== req.params.integration
  ) {
    res.status(400).send(messagePage('Link not valid', 'This connect link does not match a connection attempt.', 'bad'));
    return;
  }
  if (attempt.status === 'CONNECTED') {
    res.send(messagePage('Already connected', `This ${attempt.integration} connection is complete. You can close this window.`, 'ok'));
    return;
  }
  if (!isOpenAttempt(attempt)) {
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
  const refused = await whyMayNotConnect(ctx.pool, human, attempt.integration, attempt.accountScope);
  if (refused) {
    res.status(403).send(notAllowedPage(refused, 'Nothing was connected.'));
    return;
  }
  if (attempt.authMode === 'cookie') return startCookieCapture(ctx, res, attempt);
  const endpoints = ctx.registry.oauth2(attempt.integration);
  if (attempt.authMode !== 'oauth2' || !endpoints) {
    res.status(400).send(messagePage('Cannot connect here', `${attempt.integration} is not connected through this link.`, 'bad'));
    return;
  }
  if ((await countOpenConsentRequests(ctx.pool, human, attempt.id, CONSENT_REQUEST_TTL_SEC)) >= MAX_OPEN_CONSENT_REQUESTS) {
    res
      .status(429)
      .send(
        messagePage(
          'Too many sign-ins open',
          `You have ${MAX_OPEN_CONSENT_REQUESTS} connections waiting at their services' consent pages. Finish one, or wait ${CONSENT_REQUEST_TTL_SEC / 60} minutes, then open this link again.`,
          'bad',
        ),
      );
    return;
  }
  const request = await buildConsentUrl(endpoints, oauthCallbackUrl(ctx.config));
  if (!(await recordAuthorizationRequest(ctx.pool, ctx.keyring, attempt.id, request))) {
    res.status(410).send(messagePage('Link expired', 'This connection attempt has expired. Ask your agent to start again.', 'bad'));
    return;
  }
  const untilExpiry = (attempt.expiresAt.getTime() - Date.now()) / 1000;
  bindBrowser(ctx, res, oauthStateBinding(attempt, request.state), Math.min(CONSENT_REQUEST_TTL_SEC, untilExpiry));
  res.redirect(303, request.url.toString());
}
