import { oauthCallbackUrl } from '../../core/urls.js';
import { OAuthFlowError } from '../../providers/sdk/oauth-client.js';
import type { ConsentRequest } from '../../providers/sdk/oauth-flow.js';
import { stepUpScopesFor } from '../accounts/store/accounts.js';
import { bindBrowser } from './browser-binding.js';
import type { BrowserVisit } from './browser-visit.js';
import { whyMayNotConnect } from './connect-rule.js';
import { WRONG_ACCOUNT } from './flow-owner.js';
import { linkExpired } from './link-expired.js';
import { CONSENT_REQUEST_TTL_SEC, MAX_OPEN_CONSENT_REQUESTS, oauthStateBinding } from './oauth-state-binding.js';
import type { ConnectionServices } from './services.js';
import { pageAnswer, type StepAnswer } from './step-answer.js';
import {
  countOpenConsentRequests,
  getAttempt,
  isOpenAttempt,
  markAttemptOpened,
  recordAuthorizationRequest,
} from './store/connection-attempts.js';

type ConnectLinkDeps = Pick<ConnectionServices, 'signer' | 'pool' | 'keyring' | 'registry' | 'config' | 'logger'>;

/**
 * GET /connect/:integration?t=… — the link an agent hands its user. The signed-in human must be
 * the user the link was made for, and may still connect it (roles read now); only then is the
 * provider's consent URL built (fresh state and PKCE for every visit), this browser bound to the
 * state (a cookie only the callback receives), and the browser sent there.
 */
export async function openConnectLink(ctx: ConnectLinkDeps, visit: BrowserVisit): Promise<StepAnswer> {
  const { req } = visit;
  const token = typeof req.query.t === 'string' ? req.query.t : '';
  const claims = token ? await ctx.signer.verify('connect-link', token) : undefined;
  if (!claims || typeof claims.a !== 'string' || typeof claims.u !== 'string' || typeof claims.t !== 'string') {
    return pageAnswer(400, 'Link not valid', 'This connect link is invalid or has expired. Ask your agent for a new one.');
  }
  const human = await visit.signedInUser();
  if (!human) return { kind: 'sign-in' };
  if (human.userId !== claims.u || human.tenantId !== claims.t) return { kind: 'page', ...WRONG_ACCOUNT, tone: 'bad' };
  const attempt = await getAttempt(ctx.pool, claims.a);
  if (
    !attempt ||
    attempt.userId !== human.userId ||
    attempt.tenantId !== human.tenantId ||
    attempt.integration !== req.params.integration
  ) {
    return pageAnswer(400, 'Link not valid', 'This connect link does not match a connection attempt.');
  }
  if (attempt.status === 'CONNECTED') {
    return pageAnswer(200, 'Already connected', `This ${attempt.integration} connection is complete. You can close this window.`, 'ok');
  }
  const expired = linkExpired('has-expired');
  if (!isOpenAttempt(attempt)) return pageAnswer(410, expired.title, expired.message);
  const refused = await whyMayNotConnect(ctx.pool, human, attempt.integration, attempt.accountScope);
  if (refused) return { kind: 'not-allowed', reason: refused };
  // Its person has it now: a newer attempt of theirs never displaces it (CONNECT_PENDING_MAX_PER_USER).
  await markAttemptOpened(ctx.pool, attempt.id);
  if (attempt.authMode === 'cookie') return { kind: 'cookie-capture', attempt };
  const flow = (await ctx.registry.forTenant(attempt.tenantId)).oauthFlow(attempt.integration);
  if (attempt.authMode !== 'oauth2' || !flow) {
    return pageAnswer(400, 'Cannot connect here', `${attempt.integration} is not connected through this link.`);
  }
  if ((await countOpenConsentRequests(ctx.pool, human, attempt.id, CONSENT_REQUEST_TTL_SEC)) >= MAX_OPEN_CONSENT_REQUESTS) {
    return pageAnswer(
      429,
      'Too many sign-ins open',
      `You have ${MAX_OPEN_CONSENT_REQUESTS} connections waiting at their services' consent pages. Finish one, or wait ${CONSENT_REQUEST_TTL_SEC / 60} minutes, then open this link again.`,
    );
  }
  let request: ConsentRequest;
  try {
    // A step-up (a 403 insufficient_scope on the account this connect replaces) asks for the wider scopes.
    const scopes = await stepUpScopesFor(ctx.pool, {
      tenantId: attempt.tenantId,
      ownerUserId: attempt.accountScope === 'tenant' ? null : attempt.userId,
      integration: attempt.integration,
    });
    request = await flow.begin({ redirectUri: oauthCallbackUrl(ctx.config), scopes });
  } catch (err) {
    // A discovered authorization server that cannot be reached or refuses Switchboard: say so, nothing is recorded.
    const e = err instanceof OAuthFlowError ? err : new OAuthFlowError('oauth_error', 'the sign-in could not be prepared');
    ctx.logger.warn({ integration: attempt.integration, code: e.code, err: e.message }, 'could not prepare the consent request');
    return pageAnswer(
      502,
      'Cannot connect now',
      `${attempt.integration}'s sign-in could not be prepared (${e.code}). Try the link again later, or ask your administrator.`,
    );
  }
  // The attempt may have expired since it was read: then no state is recorded.
  if (!(await recordAuthorizationRequest(ctx.pool, ctx.keyring, attempt.id, request)))
    return pageAnswer(410, expired.title, expired.message);
  const untilExpiry = (attempt.expiresAt.getTime() - Date.now()) / 1000;
  bindBrowser(ctx, visit.res, oauthStateBinding(attempt, request.state), Math.min(CONSENT_REQUEST_TTL_SEC, untilExpiry));
  return { kind: 'redirect', url: request.url.toString() };
}
