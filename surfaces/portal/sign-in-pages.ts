import { type Request, type Response, Router } from 'express';
import { safeNext } from '../../core/urls.js';
import { consumeLoginToken, peekLoginToken } from '../../features/accounts/store/login-tokens.js';
import { getUser } from '../../features/accounts/store/users.js';
import type { ServiceContext } from '../../features/context.js';
import { formBody } from './form-body.js';
import { html, messagePage, page } from './html.js';
import { oidcSignIn } from './oidc-sign-in.js';
import { endPortalSession, readPortalUser, startPortalSession } from './session-cookie.js';

/** The portal's sign-in and sign-out: OIDC when configured, one-time links (admin login-link) for development. */
export function signInRouter(ctx: ServiceContext): Router {
  const router = Router();
  const oidc = oidcSignIn(ctx);

  router.get('/portal/login', async (req: Request, res: Response) => {
    const next = safeNext(req.query.next);
    if (!oidc) {
      return res.send(
        page(
          'Sign in',
          html`<h1>Sign in</h1><div class="box"><p>This server has no single sign-on configured. Ask an operator for a sign-in link:</p>
<p><code>npm run admin -- login-link you@example.com</code></p></div>`,
        ),
      );
    }
    await oidc.start(req, res, next);
  });

  router.get('/portal/oidc/callback', async (req: Request, res: Response) => {
    if (!oidc) return res.status(404).send(messagePage('Not found', 'This server has no single sign-on configured.', 'bad'));
    await oidc.callback(req, res);
  });

  // A GET shows a button; only the POST consumes the one-time token, so link previews don't. The
  // page names the account the link opens, and warns a human signed in as someone else: a link
  // Mallory sends Alice would otherwise quietly put Alice's next steps into Mallory's account.
  router.get('/portal/login-link', async (req: Request, res: Response) => {
    const token = typeof req.query.token === 'string' ? req.query.token : '';
    const target = token ? await peekLoginToken(ctx.pool, token) : undefined;
    if (!target) {
      return res
        .status(400)
        .send(messagePage('Sign-in link not valid', 'This sign-in link is unknown, used or expired. Ask for a new one.', 'bad'));
    }
    const human = await readPortalUser(ctx, req);
    const current = human && human.userId !== target.userId ? await getUser(ctx.pool, human.userId) : undefined;
    const warning = current
      ? html`<div class="box" role="alert"><p>You are signed in as <strong>${current.email}</strong>. This link signs you in as
<strong>${target.email}</strong> instead: everything you do next (connections, API keys) goes to that account. Continue only if
you asked for this link yourself.</p></div>`
      : html``;
    res.send(
      page(
        'Sign in',
        html`<h1>Sign in to Switchboard</h1><p>This link signs you in as <strong>${target.email}</strong>.</p>${warning}
<form method="post" action="/portal/login-link">
<input type="hidden" name="token" value="${token}"><input type="hidden" name="next" value="${safeNext(req.query.next)}">
<button type="submit">Sign in as ${target.email}</button></form>`,
      ),
    );
  });

  router.post('/portal/login-link', formBody, async (req: Request, res: Response) => {
    const user = typeof req.body?.token === 'string' ? await consumeLoginToken(ctx.pool, req.body.token) : undefined;
    if (!user) {
      return res
        .status(400)
        .send(messagePage('Sign-in link not valid', 'This sign-in link is unknown, used or expired. Ask for a new one.', 'bad'));
    }
    await startPortalSession(ctx, res, user);
    res.redirect(303, safeNext(req.body.next));
  });

  // Ends every session of this user, in every browser (session version, session-cookie.ts).
  router.post('/portal/logout', async (req: Request, res: Response) => {
    await endPortalSession(ctx, req, res);
    res.redirect(303, '/portal/login');
  });

  return router;
}
