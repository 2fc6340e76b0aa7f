import express, { type NextFunction, type Request, type Response, Router } from 'express';
import type Provider from 'oidc-provider';
import { errors } from 'oidc-provider';
import { html, SafeHtml } from '../surfaces/portal/html.js';
import { DEMO_SCOPES } from './authorization-server.js';

/**
 * The demo authorization server's two pages, in the order a person meets them after Switchboard's
 * connect link sends them here: sign in (any account name, no password: these are made-up demo
 * accounts), then consent (what the client asks for, Allow or Deny). oidc-provider runs the
 * protocol around them; each POST is bound to its interaction by oidc-provider's own cookie, so a
 * page of another site cannot answer for the person.
 */

/** Demo account names: lower-case words, digits, `.`, `_`, `-`, `@`. Never `__proto__` (a board key). */
export const ACCOUNT_NAME = /^[a-z0-9][a-z0-9._@-]{0,39}$/;
export const DEFAULT_ACCOUNT = 'demo-user';

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:34rem;margin:2.5rem auto;padding:0 1rem;color:#2b2233;background:#fbf7ff}
.banner{background:#6b3fa0;color:#fff;border-radius:8px;padding:.6rem 1rem;font-weight:600;letter-spacing:.02em}
.banner span{font-weight:400;opacity:.85}h1{font-size:1.4rem;margin:1.5rem 0 .5rem}
.box{background:#fff;border:1px solid #ddd0ec;border-radius:8px;padding:1rem 1.25rem;margin:1rem 0}
ul{padding-left:1.2rem}li{margin:.3rem 0}code{background:#f1eaf8;padding:0 .3rem;border-radius:4px}
label{display:block;font-weight:600;margin:.5rem 0 .3rem}input{font:inherit;padding:.45rem .6rem;border:1px solid #b9a8cf;border-radius:6px;width:100%;box-sizing:border-box}
.actions{display:flex;gap:.6rem;margin-top:1rem}button{font:inherit;padding:.5rem 1.1rem;border-radius:6px;border:1px solid #6b3fa0;background:#6b3fa0;color:#fff;cursor:pointer}
button.secondary{background:#fff;color:#6b3fa0}.muted{color:#6d6478;font-size:.9rem}`;

/** Pages a person meets mid-consent: never framed (clickjacking), never cached, no scripts at all. */
const SECURITY_HEADERS = {
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
};

function demoPage(title: string, body: SafeHtml): string {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${title} · Demo Tasks (demo)</title><style>${new SafeHtml(STYLE)}</style></head>
<body><div class="banner">Demo Tasks <span>— a demo service served by npm start, not a real account</span></div>
<main>${body}</main></body></html>`.value;
}

function signInPage(uid: string, problem?: string): string {
  return demoPage(
    'Sign in',
    html`<h1>Sign in to Demo Tasks</h1>
<form class="box" method="post" action="/interaction/${uid}/sign-in">
<label for="account">Demo account name</label>
<input id="account" name="account" value="${DEFAULT_ACCOUNT}" autocomplete="off" spellcheck="false" required maxlength="40">
${problem ? html`<p role="alert">${problem}</p>` : ''}
<p class="muted">Any name signs in (no password): each name is its own demo account with its own tasks.</p>
<div class="actions"><button type="submit">Sign in</button></div>
</form>`,
  );
}

function consentPage(uid: string, clientName: string, account: string, scopes: string[], returnTo: string): string {
  const rows = scopes.map((scope) => html`<li><code>${scope}</code> — ${DEMO_SCOPES[scope as keyof typeof DEMO_SCOPES] ?? scope}</li>`);
  return demoPage(
    'Allow access',
    html`<h1>Allow ${clientName} to use your demo tasks?</h1>
<div class="box"><p><strong>${clientName}</strong> asks to:</p><ul>${rows}</ul>
<p class="muted">Signed in as <strong>${account}</strong>. Your answer goes back to ${returnTo}.</p>
<div class="actions">
<form method="post" action="/interaction/${uid}/allow"><button type="submit">Allow</button></form>
<form method="post" action="/interaction/${uid}/deny"><button type="submit" class="secondary">Deny</button></form>
</div></div>`,
  );
}

const problemPage = (message: string) =>
  demoPage('Demo authorization server', html`<h1>Cannot continue</h1><div class="box"><p>${message}</p></div>`);

/** The router of the two pages; mount it before oidc-provider's own routes. */
export function signInAndConsent(provider: Provider, log: (line: string) => void): Router {
  const router = Router();
  router.use('/interaction', (_req, res, next) => {
    res.set(SECURITY_HEADERS);
    next();
  });
  const form = express.urlencoded({ extended: false, limit: '4kb' });

  router.get('/interaction/:uid', async (req, res) => {
    const details = await provider.interactionDetails(req, res);
    if (details.uid !== req.params.uid) throw new errors.SessionNotFound('interaction mismatch');
    if (details.prompt.name === 'login') return void res.send(signInPage(details.uid));
    const client = await provider.Client.find(String(details.params.client_id));
    const missing = (details.prompt.details.missingResourceScopes ?? {}) as Record<string, string[]>;
    const scopes = [...new Set(Object.values(missing).flat())];
    const returnTo = URL.canParse(String(details.params.redirect_uri)) ? new URL(String(details.params.redirect_uri)).origin : 'the client';
    res.send(
      consentPage(details.uid, client?.clientName ?? String(details.params.client_id), details.session?.accountId ?? '', scopes, returnTo),
    );
  });

  router.post('/interaction/:uid/sign-in', form, async (req, res) => {
    const details = await provider.interactionDetails(req, res);
    if (details.uid !== req.params.uid || details.prompt.name !== 'login') throw new errors.SessionNotFound('not a sign-in');
    const account = String(req.body?.account ?? '')
      .trim()
      .toLowerCase();
    if (!ACCOUNT_NAME.test(account)) {
      res
        .status(400)
        .send(signInPage(details.uid, 'Use 1 to 40 lower-case letters, digits, ".", "_", "-" or "@", starting with a letter or digit.'));
      return;
    }
    log(`${account} signed in`);
    await provider.interactionFinished(req, res, { login: { accountId: account } }, { mergeWithLastSubmission: false });
  });

  router.post('/interaction/:uid/allow', async (req, res) => {
    const details = await provider.interactionDetails(req, res);
    const accountId = details.session?.accountId;
    if (details.uid !== req.params.uid || details.prompt.name !== 'consent' || !accountId) {
      throw new errors.SessionNotFound('not a consent');
    }
    const grant = new provider.Grant({ accountId, clientId: String(details.params.client_id) });
    const missing = (details.prompt.details.missingResourceScopes ?? {}) as Record<string, string[]>;
    for (const [resource, scopes] of Object.entries(missing)) grant.addResourceScope(resource, scopes.join(' '));
    const oidcScopes = details.prompt.details.missingOIDCScope as string[] | undefined;
    if (oidcScopes?.length) grant.addOIDCScope(oidcScopes.join(' '));
    const grantId = await grant.save();
    log(`${accountId} allowed ${Object.values(missing).flat().join(' ') || 'access'}`);
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  });

  router.post('/interaction/:uid/deny', async (req, res) => {
    const details = await provider.interactionDetails(req, res);
    if (details.uid !== req.params.uid) throw new errors.SessionNotFound('interaction mismatch');
    log(`${details.session?.accountId ?? 'someone'} denied access`);
    await provider.interactionFinished(
      req,
      res,
      { error: 'access_denied', error_description: 'The person denied access' },
      { mergeWithLastSubmission: false },
    );
  });

  // An interaction this browser does not hold (expired, or opened in another browser): say so plainly.
  router.use('/interaction', (err: Error, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    const expired = err instanceof errors.SessionNotFound;
    res
      .status(expired ? 400 : 500)
      .send(
        problemPage(
          expired
            ? 'This sign-in has expired or was started in another browser. Go back to your agent and connect again.'
            : 'The demo authorization server failed; see the npm start terminal.',
        ),
      );
    if (!expired) log(`interaction error: ${err.message}`);
  });
  return router;
}
