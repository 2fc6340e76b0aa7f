import { type Request, Router } from 'express';
import { listUsableAccounts } from '../../features/accounts/store/accounts.js';
import { enabledProviders } from '../../features/catalog/caller-tenant.js';
import { forTenant } from '../../features/connections/services.js';
import type { ServiceContext } from '../../features/context.js';
import type { Provider } from '../../providers/sdk/index.js';
import { AUTH_MODE_LABEL, apiKeyPagePath, connectButton, connectsByAttempt, consentOrigins } from './connect-controls.js';
import { csrfToken } from './csrf.js';
import { allowFormActionTo } from './form-action.js';
import { html, type SafeHtml } from './html.js';
import { portalPage } from './portal-page.js';
import { type SignedIn, signedInPage } from './signed-in.js';

/**
 * GET /portal/integrations — every provider the organisation enabled, how it connects, and the
 * way to connect it: a link to the API-key form (integration-page.ts), or a Connect button that
 * starts a connection attempt (connect-action.ts) for OAuth. Administrators also connect
 * organisation accounts here.
 */

function actionFor(ctx: ServiceContext, csrf: string, provider: Provider, forOrg: boolean): SafeHtml {
  const { auth, name } = provider.manifest;
  if (auth === 'none') return html`<span class="muted">Always connected</span>`;
  if (auth === 'apikey') {
    return html`<a class="button small" href="${apiKeyPagePath(name, forOrg)}">${forOrg ? 'Add organisation key' : 'Add API key'}</a>`;
  }
  if (!connectsByAttempt(ctx, provider)) return html`<span class="muted">Not configured on this server</span>`;
  return connectButton(csrf, provider, forOrg, forOrg ? 'Connect for organisation' : 'Connect');
}

async function integrationsPage(base: ServiceContext, req: Request, me: SignedIn): Promise<{ body: string; origins: string[] }> {
  const ctx = await forTenant(base, me.caller.tenantId);
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
    origins: await consentOrigins(
      ctx,
      providers.filter((p) => connectsByAttempt(ctx, p)),
    ),
  };
}

export function integrationsListRouter(ctx: ServiceContext): Router {
  const router = Router();

  router.get(
    '/portal/integrations',
    signedInPage(ctx, async (req, res, me) => {
      const { body, origins } = await integrationsPage(ctx, req, me);
      allowFormActionTo(res, origins);
      res.send(body);
    }),
  );

  return router;
}
