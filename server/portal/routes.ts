import express, { type Request, type Response, Router } from 'express';
import * as oidc from 'openid-client';
import { safeNext } from '../../core/urls.js';
import { consumeLoginToken } from '../../store/login-tokens.js';
import { findUserByEmail, getUser } from '../../store/users.js';
import type { ServiceContext } from '../context.js';
import { accountsRouter } from './accounts-pages.js';
import { apiKeyRouter } from './apikey-form.js';
import { html, messagePage, page } from './html.js';
import { integrationsRouter } from './integrations-pages.js';
import { endPortalSession, readPortalUser, startPortalSession } from './session.js';

const LOGIN_COOKIE = 'sb_login';

/** The portal's sign-in: OIDC when configured, one-time links (admin login-link) for development. */
export function portalRouter(ctx: ServiceContext): Router {
  const router = Router();
  const form = express.urlencoded({ extended: false, limit: '16kb' });
  const { config } = ctx;
  const oidcEnabled = Boolean(config.PORTAL_OIDC_ISSUER && config.PORTAL_OIDC_CLIENT_ID && config.PORTAL_OIDC_CLIENT_SECRET);
  let oidcConfig: Promise<oidc.Configuration> | undefined;
  const getOidcConfig = () => {
    oidcConfig ??= (async () => {
      const issuer = new URL(config.PORTAL_OIDC_ISSUER as string);
      return oidc.discovery(issuer, config.PORTAL_OIDC_CLIENT_ID as string, config.PORTAL_OIDC_CLIENT_SECRET, undefined, {
        execute: issuer.protocol === 'http:' ? [oidc.allowInsecureRequests] : [],
      });
    })().catch((err) => {
      oidcConfig = undefined;
      throw err;
    });
    return oidcConfig;
  };
  const oidcRedirectUri = `${config.PUBLIC_BASE_URL}/portal/oidc/callback`;

  router.get('/portal', async (req: Request, res: Response) => {
    const human = await readPortalUser(ctx, req);
    if (!human) return res.redirect(303, '/portal/login');
    const user = await getUser(ctx.pool, human.userId);
    res.send(
      page(
        'Portal',
        html`<h1>Switchboard</h1><p>Signed in as <strong data-testid="signed-in-as">${user?.email ?? human.userId}</strong>.</p>
<ul><li><a href="/portal/integrations">Integrations</a>: connect services, add API keys</li>
<li><a href="/portal/accounts">Accounts</a>: rename, choose defaults, disconnect${user?.roles.includes('admin') ? ', share organisation accounts' : ''}</li></ul>
<form method="post" action="/portal/logout"><button type="submit">Sign out</button></form>`,
      ),
    );
  });

  router.get('/portal/login', async (req: Request, res: Response) => {
    const next = safeNext(req.query.next);
    if (!oidcEnabled) {
      return res.send(
        page(
          'Sign in',
          html`<h1>Sign in</h1><div class="box"><p>This server has no single sign-on configured. Ask an operator for a sign-in link:</p>
<p><code>npm run admin -- login-link you@example.com</code></p></div>`,
        ),
      );
    }
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(await getOidcConfig(), {
      redirect_uri: oidcRedirectUri,
      scope: 'openid email profile',
      state,
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
    });
    // The verifier is sealed before it rides in the browser's cookie.
    res.cookie(LOGIN_COOKIE, ctx.keyring.encrypt(JSON.stringify({ codeVerifier, state, next }), 'portal-login'), {
      httpOnly: true,
      sameSite: 'lax',
      secure: config.PUBLIC_BASE_URL.startsWith('https:'),
      maxAge: 10 * 60 * 1000,
      path: '/portal/oidc',
    });
    res.redirect(303, url.toString());
  });

  router.get('/portal/oidc/callback', async (req: Request, res: Response) => {
    const sealed = req.cookies?.[LOGIN_COOKIE];
    res.clearCookie(LOGIN_COOKIE, { path: '/portal/oidc' });
    let pending: { codeVerifier: string; state: string; next: string };
    try {
      pending = JSON.parse(ctx.keyring.decrypt(String(sealed), 'portal-login'));
    } catch {
      return res.status(400).send(messagePage('Sign-in failed', 'The sign-in took too long or was started elsewhere. Try again.', 'bad'));
    }
    const current = new URL(oidcRedirectUri);
    for (const [k, v] of Object.entries(req.query)) if (typeof v === 'string') current.searchParams.set(k, v);
    let email: string | undefined;
    try {
      const config = await getOidcConfig();
      const tokens = await oidc.authorizationCodeGrant(config, current, {
        pkceCodeVerifier: pending.codeVerifier,
        expectedState: pending.state,
      });
      const claims = tokens.claims();
      email = claims?.email as string | undefined;
      // Many providers keep the ID token lean and serve the email from userinfo only.
      if (!email && claims) email = (await oidc.fetchUserInfo(config, tokens.access_token, claims.sub)).email;
    } catch (err) {
      ctx.logger.warn({ err: (err as Error).message }, 'portal sign-in failed');
      return res.status(400).send(messagePage('Sign-in failed', 'The identity provider did not confirm the sign-in. Try again.', 'bad'));
    }
    const user = email ? await findUserByEmail(ctx.pool, email) : undefined;
    if (!user) {
      return res.status(403).send(messagePage('No account', `No Switchboard user has the email ${email ?? '(none given)'}.`, 'bad'));
    }
    await startPortalSession(ctx, res, { userId: user.id, tenantId: user.tenantId });
    res.redirect(303, safeNext(pending.next));
  });

  // A GET shows a button; only the POST consumes the one-time token, so link previews don't.
  router.get('/portal/login-link', (req: Request, res: Response) => {
    const token = typeof req.query.token === 'string' ? req.query.token : '';
    res.send(
      page(
        'Sign in',
        html`<h1>Sign in to Switchboard</h1><form method="post" action="/portal/login-link">
<input type="hidden" name="token" value="${token}"><input type="hidden" name="next" value="${safeNext(req.query.next)}">
<button type="submit">Sign in</button></form>`,
      ),
    );
  });

  router.post('/portal/login-link', form, async (req: Request, res: Response) => {
    const user = typeof req.body?.token === 'string' ? await consumeLoginToken(ctx.pool, req.body.token) : undefined;
    if (!user) {
      return res
        .status(400)
        .send(messagePage('Sign-in link not valid', 'This sign-in link is unknown, used or expired. Ask for a new one.', 'bad'));
    }
    await startPortalSession(ctx, res, user);
    res.redirect(303, safeNext(req.body.next));
  });

  router.post('/portal/logout', (_req: Request, res: Response) => {
    endPortalSession(res);
    res.redirect(303, '/portal/login');
  });

  router.use(integrationsRouter(ctx), apiKeyRouter(ctx), accountsRouter(ctx));

  return router;
}
