import type { OAuthContext } from '../../core/oauth-context.js';
import { oauthCallbackUrl } from '../../core/urls.js';
import type { Provider } from '../../providers/sdk/index.js';
import { OAuthFlowError, type TokenSet } from '../../providers/sdk/oauth-client.js';
import { arrivedAt, type OAuthFlow } from '../../providers/sdk/oauth-flow.js';
import { unbindBrowser } from './browser-binding.js';
import type { BrowserVisit } from './browser-visit.js';
import { checkContext } from './check-context.js';
import { completeConnection } from './complete.js';
import { whyMayNotConnect } from './connect-rule.js';
import { whyNotFlowOwner } from './flow-owner.js';
import { linkExpired } from './link-expired.js';
import { oauthStateBinding } from './oauth-state-binding.js';
import type { ConnectionServices } from './services.js';
import { pageAnswer, type StepAnswer } from './step-answer.js';
import { type ConnectionAttempt, consumeState, isOpenAttempt } from './store/connection-attempts.js';

type OAuthCallbackDeps = Pick<ConnectionServices, 'pool' | 'keyring' | 'registry' | 'config' | 'signer' | 'temporal' | 'logger'>;

/**
 * GET /oauth/callback (and a discovered authorization server's /oauth/callback/<key>) — consumes the state (a state is used once, whatever happens next), then
 * goes on only for the browser that opened the connect link (its binding cookie), signed in to
 * the portal as the attempt's user, who may still connect (roles read now), for an attempt still
 * PENDING and before its expiry. Only then is the code exchanged with PKCE, the sealed credential
 * stored and the attempt promoted, and the workflow signalled with ids only.
 *
 * Anyone else exchanges nothing and the attempt keeps its status: a consent URL copied out of the
 * owner's browser and opened by someone else (who consents as themselves) ends on the "Wrong
 * account" page, and the code that came with it can never be exchanged, because its state is spent.
 * A denial or a failed exchange leaves the attempt PENDING, so the human can open the same link
 * and try again.
 */
export async function finishOAuthCallback(ctx: OAuthCallbackDeps, visit: BrowserVisit): Promise<StepAnswer> {
  const { req } = visit;
  // A parameter given twice (RFC 6749 §4.1.2: never in a response the server sent) would be dropped
  // below, so `iss=<issuer>&iss=<another>` would pass as no `iss` at all: refuse the whole response.
  if (Object.values(req.query).some((value) => typeof value !== 'string')) {
    return pageAnswer(400, 'Sign-in not recognised', 'This sign-in response is malformed. Open the connect link again.');
  }
  const state = typeof req.query.state === 'string' ? req.query.state : '';
  const consumed = state ? await consumeState(ctx.pool, ctx.keyring, state) : undefined;
  if (!consumed) {
    return pageAnswer(400, 'Sign-in not recognised', 'This sign-in response is unknown or was already used. Open the connect link again.');
  }
  const { attempt, codeVerifier, oauthContext } = consumed;
  const log = ctx.logger.child({ attemptId: attempt.id, integration: attempt.integration });
  const binding = oauthStateBinding(attempt, state);
  const refusal = await whyNotFlowOwner(ctx, visit, attempt, binding);
  if (refusal) {
    log.warn({ refused: refusal.title }, 'callback not from the browser and user that started it; code not exchanged');
    return { kind: 'page', ...refusal, tone: 'bad' };
  }
  unbindBrowser(ctx, visit.res, binding);
  const expired = linkExpired('expired-before-you-finished');
  if (!isOpenAttempt(attempt) || !codeVerifier) {
    // Never exchange a code for an attempt that can no longer connect, timer fired or not.
    log.info({ status: attempt.status }, 'callback for a final or expired attempt; code not exchanged');
    return pageAnswer(410, expired.title, expired.message);
  }
  const refused = await whyMayNotConnect(ctx.pool, attempt, attempt.integration, attempt.accountScope);
  if (refused) {
    log.info({ refused }, 'callback for a user who may no longer connect; code not exchanged');
    return { kind: 'not-allowed', reason: refused };
  }

  // Rebuild the URL from the configured public base URL and the callback path it arrived at, never
  // from the Host header. A discovered authorization server has a callback of its own: a response
  // that arrives at another one than its consent was asked with came from another server (a mix-up).
  const shared = oauthCallbackUrl(ctx.config);
  const issuerKey = typeof req.params?.issuerKey === 'string' ? req.params.issuerKey : undefined;
  const callbackUrl = new URL(issuerKey ? `${shared}/${encodeURIComponent(issuerKey)}` : shared);
  if (!arrivedAt(callbackUrl, oauthContext?.redirectUri ?? shared)) {
    log.warn({ arrivedAt: callbackUrl.pathname }, 'callback arrived at the callback of another authorization server; code not exchanged');
    return pageAnswer(
      400,
      'Sign-in not recognised',
      `This sign-in came back from another server than the one ${attempt.integration} sent you to, so nothing was connected. Open the connect link again.`,
    );
  }

  if (typeof req.query.error === 'string') {
    log.info({ error: req.query.error }, 'the user or the service declined the authorization');
    return pageAnswer(
      400,
      'Not connected',
      `${attempt.integration} did not grant access (${req.query.error}). You can open the connect link again to retry.`,
    );
  }

  const registry = await ctx.registry.forTenant(attempt.tenantId);
  const flow = registry.oauthFlow(attempt.integration);
  const provider = registry.get(attempt.integration);
  if (!flow || !provider) return pageAnswer(400, 'Not connected', `${attempt.integration} is not configured on this server.`);

  for (const [key, value] of Object.entries(req.query)) if (typeof value === 'string') callbackUrl.searchParams.set(key, value);

  const tokens = await exchangeCode(flow, callbackUrl, { codeVerifier, expectedState: state, context: oauthContext }, attempt, log);
  if ('kind' in tokens) return tokens;

  const identity = await identify({ ...ctx, registry }, provider, attempt, tokens);
  const outcome = await completeConnection(ctx, attempt, {
    label: identity?.label ?? provider.manifest.displayName,
    externalId: identity?.externalId ?? null,
    grantedScopes: tokens.scopes,
    accessExpiresAt: tokens.expiresAt ?? null,
    credential: oauthCredential(tokens, oauthContext, provider),
  });

  if (!outcome) {
    log.info('callback arrived after the attempt expired; credential discarded');
    await flow.revoke(tokens.refreshToken ?? tokens.accessToken, oauthContext).catch(() => false);
    return pageAnswer(410, expired.title, expired.message);
  }

  log.info({ accountId: outcome.id }, 'connected');
  return pageAnswer(
    200,
    'Connected',
    `Your ${provider.manifest.displayName} account ${outcome.label} is connected. You can close this window.`,
    'ok',
  );
}

/** The code exchanged for tokens, or the page that says the service refused it. */
async function exchangeCode(
  flow: OAuthFlow,
  callbackUrl: URL,
  checks: Parameters<OAuthFlow['finish']>[1],
  attempt: ConnectionAttempt,
  log: OAuthCallbackDeps['logger'],
): Promise<TokenSet | StepAnswer> {
  try {
    return await flow.finish(callbackUrl, checks);
  } catch (err) {
    const e = err instanceof OAuthFlowError ? err : new OAuthFlowError('oauth_error', 'the code exchange failed');
    log.warn({ code: e.code, err: e.message }, 'code exchange failed');
    return pageAnswer(
      502,
      'Not connected',
      `${attempt.integration} refused the sign-in (${e.code}). Open the connect link again to retry.`,
    );
  }
}

/** The credential sealed for the account: the tokens, the server's OAuth context, and what they are bound to. */
function oauthCredential(tokens: TokenSet, oauthContext: OAuthContext | undefined, provider: Provider) {
  return {
    type: 'oauth2' as const,
    accessToken: tokens.accessToken,
    refreshToken: tokens.refreshToken,
    tokenType: tokens.tokenType,
    ...(oauthContext && { oauth: oauthContext }),
    ...(provider.credentialBinding && { boundTo: provider.credentialBinding }),
  };
}

async function identify(ctx: OAuthCallbackDeps, provider: Provider, attempt: ConnectionAttempt, tokens: TokenSet) {
  if (!provider.identify) return undefined;
  try {
    return await provider.identify(
      checkContext(ctx, {
        provider,
        credential: { type: 'oauth2', accessToken: tokens.accessToken, tokenType: tokens.tokenType },
        caller: { tenantId: attempt.tenantId, userId: attempt.userId },
        logger: ctx.logger,
        timeoutMs: 10_000,
      }),
    );
  } catch (err) {
    ctx.logger.warn({ integration: provider.manifest.name, err: (err as Error).message }, 'could not identify the account');
    return undefined;
  }
}
