import type { Request, Response } from 'express';
import { oauthCallbackUrl } from '../../core/urls.js';
import { exchangeCode, OAuthFlowError, revokeToken, type TokenSet } from '../../providers/oauth-client.js';
import type { Provider } from '../../providers/sdk.js';
import { createToolContext } from '../../providers/tool-context.js';
import { type ConnectionAttempt, consumeState } from '../../store/connection-attempts.js';
import { completeConnection } from '../connections/complete-connection.js';
import type { ServiceContext } from '../context.js';
import { messagePage } from '../portal/html.js';

const EXPIRED_MESSAGE = 'This connection attempt expired before you finished. Ask your agent to start again; it will give you a new link.';

/**
 * GET /oauth/callback — validates the state, exchanges the code with PKCE, stores the sealed
 * credential and promotes the attempt if (and only if) it is still PENDING, then signals the
 * workflow with ids only. A denial or a failed exchange leaves the attempt PENDING, so the
 * human can open the same link and try again.
 */
export async function handleOAuthCallback(ctx: ServiceContext, req: Request, res: Response): Promise<void> {
  const state = typeof req.query.state === 'string' ? req.query.state : '';
  const consumed = state ? await consumeState(ctx.pool, ctx.keyring, state) : undefined;
  if (!consumed) {
    res
      .status(400)
      .send(
        messagePage('Sign-in not recognised', 'This sign-in response is unknown or was already used. Open the connect link again.', 'bad'),
      );
    return;
  }
  const { attempt, codeVerifier } = consumed;
  const log = ctx.logger.child({ attemptId: attempt.id, integration: attempt.integration });
  if (attempt.status !== 'PENDING' || !codeVerifier) {
    // Never exchange a code for an attempt that can no longer connect.
    log.info({ status: attempt.status }, 'callback for a final attempt; code not exchanged');
    res.status(410).send(messagePage('Link expired', EXPIRED_MESSAGE, 'bad'));
    return;
  }

  if (typeof req.query.error === 'string') {
    log.info({ error: req.query.error }, 'the user or the service declined the authorization');
    res
      .status(400)
      .send(
        messagePage(
          'Not connected',
          `${attempt.integration} did not grant access (${req.query.error}). You can open the connect link again to retry.`,
          'bad',
        ),
      );
    return;
  }

  const endpoints = ctx.registry.oauth2(attempt.integration);
  const provider = ctx.registry.get(attempt.integration);
  if (!endpoints || !provider) {
    res.status(400).send(messagePage('Not connected', `${attempt.integration} is not configured on this server.`, 'bad'));
    return;
  }

  // Rebuild the URL from the configured public base URL, never from the Host header.
  const callbackUrl = new URL(oauthCallbackUrl(ctx.config));
  for (const [key, value] of Object.entries(req.query)) if (typeof value === 'string') callbackUrl.searchParams.set(key, value);

  let tokens: TokenSet;
  try {
    tokens = await exchangeCode(endpoints, callbackUrl, { codeVerifier, expectedState: state });
  } catch (err) {
    const e = err instanceof OAuthFlowError ? err : new OAuthFlowError('oauth_error', 'the code exchange failed');
    log.warn({ code: e.code, err: e.message }, 'code exchange failed');
    res
      .status(502)
      .send(
        messagePage(
          'Not connected',
          `${attempt.integration} refused the sign-in (${e.code}). Open the connect link again to retry.`,
          'bad',
        ),
      );
    return;
  }

  const identity = await identify(ctx, provider, attempt, tokens);
  const outcome = await completeConnection(ctx, attempt, {
    label: identity?.label ?? provider.manifest.displayName,
    externalId: identity?.externalId ?? null,
    grantedScopes: tokens.scopes,
    accessExpiresAt: tokens.expiresAt ?? null,
    credential: { type: 'oauth2', accessToken: tokens.accessToken, refreshToken: tokens.refreshToken, tokenType: tokens.tokenType },
  });

  if (!outcome) {
    log.info('callback arrived after the attempt expired; credential discarded');
    await revokeToken(endpoints, tokens.refreshToken ?? tokens.accessToken).catch(() => false);
    res
      .status(410)
      .send(
        messagePage(
          'Link expired',
          'This connection attempt expired before you finished. Ask your agent to start again; it will give you a new link.',
          'bad',
        ),
      );
    return;
  }

  log.info({ accountId: outcome.id }, 'connected');
  res.send(
    messagePage(
      'Connected',
      `Your ${provider.manifest.displayName} account ${outcome.label} is connected. You can close this window.`,
      'ok',
    ),
  );
}

async function identify(ctx: ServiceContext, provider: Provider, attempt: ConnectionAttempt, tokens: TokenSet) {
  if (!provider.identify) return undefined;
  try {
    return await provider.identify(
      createToolContext({
        provider,
        credential: { type: 'oauth2', accessToken: tokens.accessToken, tokenType: tokens.tokenType },
        apiBaseUrl: ctx.registry.apiBaseUrl(provider.manifest.name),
        signal: AbortSignal.timeout(10_000),
        logger: ctx.logger,
        caller: { tenantId: attempt.tenantId, userId: attempt.userId },
      }),
    );
  } catch (err) {
    ctx.logger.warn({ integration: provider.manifest.name, err: (err as Error).message }, 'could not identify the account');
    return undefined;
  }
}
