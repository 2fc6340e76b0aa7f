import express, { type Request, type Response, Router } from 'express';
import { MetaToolError } from '../../core/errors.js';
import type { AuthMode, Provider } from '../../providers/sdk.js';
import { listUsableAccounts } from '../../store/accounts.js';
import type { ServiceContext } from '../context.js';
import { enabledProviders } from '../meta/caller-tenant.js';
import { startConnection } from '../meta/connect.js';
import { csrfToken, requireCsrf } from './csrf.js';
import { allowFormActionTo, originOf } from './form-action.js';
import { html, messagePage, type SafeHtml } from './html.js';
import { portalPage, type SignedIn, signedIn, toSignIn } from './signed-in.js';

/**
 * The portal's integrations: every provider the organisation enabled, how it connects, and the
 * way to connect it — a form for API keys, a Connect button that starts a connection attempt
 * (the same one `connect` starts for an agent) for OAuth. Administrators also connect
 * organisation accounts here.
 */

export const AUTH_MODE_LABEL: Record<AuthMode, string> = {
  oauth2: 'OAuth sign-in',
  apikey: 'API key',
  cookie: 'Browser sign-in',
  none: 'Built in',
};

/** `?for=organisation` (or the form field `for`) asks for an organisation account. */
export const FOR_ORGANISATION = 'organisation';

export const integrationPath = (name: string) => `/portal/integrations/${encodeURIComponent(name)}`;

/** Whether the portal starts a connection attempt for this provider (rather than showing a form). */
export const connectsByAttempt = (ctx: ServiceContext, provider: Provider) =>
  (provider.manifest.auth === 'oauth2' && ctx.registry.isConfigured(provider.manifest.name)) || provider.manifest.auth === 'cookie';

/** The origins a Connect button of these providers ends up at, for the page's form-action. */
export function consentOrigins(ctx: ServiceContext, providers: readonly Provider[]): string[] {
  return providers
    .map((p) => ctx.registry.oauth2(p.manifest.name)?.authorizeUrl)
    .map((url) => (url ? originOf(url) : undefined))
    .filter((o): o is string => o !== undefined);
}

/** The button that starts a connection (for the organisation when `forOrg`). */
export function connectButton(csrf: string, provider: Provider, forOrg: boolean, text: string): SafeHtml {
  return html`<form method="post" action="${integrationPath(provider.manifest.name)}/connect" class="inline">
<input type="hidden" name="_csrf" value="${csrf}">${forOrg ? html`<input type="hidden" name="for" value="${FOR_ORGANISATION}">` : ''}
<button type="submit" class="small">${text}</button></form>`;
}

function actionFor(ctx: ServiceContext, csrf: string, provider: Provider, forOrg: boolean): SafeHtml {
  const { auth, name } = provider.manifest;
  if (auth === 'none') return html`<span class="muted">Always connected</span>`;
  if (auth === 'apikey') {
    const href = forOrg ? `${integrationPath(name)}?for=${FOR_ORGANISATION}` : integrationPath(name);
    return html`<a class="button small" href="${href}">${forOrg ? 'Add organisation key' : 'Add API key'}</a>`;
  }
  if (!connectsByAttempt(ctx, provider)) return html`<span class="muted">Not configured on this server</span>`;
  return connectButton(csrf, provider, forOrg, forOrg ? 'Connect for organisation' : 'Connect');
}

async function integrationsPage(ctx: ServiceContext, req: Request, me: SignedIn): Promise<{ body: string; origins: string[] }> {
  const providers = await enabledProviders(ctx, me.caller);
  const accounts = await listUsableAccounts(ctx.pool, me.caller);
  const csrf = csrfToken(ctx, req);
  const rows = providers.map((provider) => {
    const { name, displayName, description, auth } = provider.manifest;
    const mine = accounts.filter((a) => a.integration === name);
    const usable = mine.some((a) => a.status === 'active' && a.hasCredential);
    const connected = auth === 'none' || usable;
    const own = mine.filter((a) => a.scope === 'user').length;
    const shared = mine.length - own;
    const counts = [own ? `${own} yours` : '', shared ? `${shared} shared` : ''].filter(Boolean).join(', ');
    return html`<tr data-integration="${name}">
<td><strong>${displayName}</strong> <code>${name}</code><br><span class="muted">${description}</span></td>
<td>${AUTH_MODE_LABEL[auth]}</td>
<td><span class="tag ${connected ? 'ok' : ''}">${connected ? 'Connected' : mine.length ? 'Needs reconnecting' : 'Not connected'}</span>${
      counts ? html` <span class="muted">${counts}</span>` : ''
    }</td>
<td class="actions">${actionFor(ctx, csrf, provider, false)}</td>
${me.isAdmin ? html`<td class="actions">${auth === 'none' ? '' : actionFor(ctx, csrf, provider, true)}</td>` : ''}</tr>`;
  });
  const body = portalPage(
    'Integrations',
    me,
    'integrations',
    html`<h1>Integrations</h1>
<p class="muted">Connect the services your agents work with. OAuth services send you to their sign-in page; for API-key services you paste a key, which Switchboard tests once and stores encrypted.${
      me.isAdmin ? ' As an administrator you can also add organisation accounts; choose who may use them on the Accounts page.' : ''
    }</p>
<table><thead><tr><th>Integration</th><th>Connects with</th><th>Status</th><th>For you</th>${me.isAdmin ? html`<th id="organisation">For the organisation</th>` : ''}</tr></thead>
<tbody>${rows}</tbody></table>
<p><a href="/portal/accounts">Manage your accounts →</a></p>`,
  );
  return {
    body,
    origins: consentOrigins(
      ctx,
      providers.filter((p) => connectsByAttempt(ctx, p)),
    ),
  };
}

export function integrationsRouter(ctx: ServiceContext): Router {
  const router = Router();
  const form = express.urlencoded({ extended: false, limit: '16kb' });

  router.get('/portal/integrations', async (req: Request, res: Response) => {
    const me = await signedIn(ctx, req);
    if (!me) return toSignIn(res, req.originalUrl);
    const { body, origins } = await integrationsPage(ctx, req, me);
    allowFormActionTo(res, origins);
    res.send(body);
  });

  // Starts a connection attempt for the signed-in user (or, for an administrator, the
  // organisation) and sends the browser to its connect link, which goes on to the consent page.
  router.post('/portal/integrations/:name/connect', form, requireCsrf(ctx), async (req: Request, res: Response) => {
    const me = await signedIn(ctx, req);
    if (!me) return toSignIn(res, '/portal/integrations');
    const name = String(req.params.name);
    const forOrg = req.body?.for === FOR_ORGANISATION;
    if (forOrg && !me.isAdmin) {
      return res.status(403).send(messagePage('Administrators only', 'Only an administrator can connect an organisation account.', 'bad'));
    }
    if (ctx.registry.get(name)?.manifest.auth === 'apikey') {
      return res.redirect(303, forOrg ? `${integrationPath(name)}?for=${FOR_ORGANISATION}` : integrationPath(name));
    }
    try {
      const started = await startConnection(ctx, me.caller, name, { accountScope: forOrg ? 'tenant' : 'user' });
      res.redirect(303, started.url);
    } catch (err) {
      if (!(err instanceof MetaToolError)) throw err;
      res.status(err.status).send(messagePage('Cannot connect', err.message, 'bad'));
    }
  });

  return router;
}
