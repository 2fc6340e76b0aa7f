import type { ServiceContext } from '../../features/context.js';
import type { AuthMode, Provider } from '../../providers/sdk/index.js';
import { html, type SafeHtml } from './html.js';

/**
 * How the portal's pages offer to connect an integration: the integration's own page, the switch
 * to an organisation account, the Connect button and the origins that button ends up at.
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

/** The page to add an API key on, for a new account of the user or (`forOrg`) of the organisation. */
export const apiKeyPagePath = (name: string, forOrg: boolean) =>
  forOrg ? `${integrationPath(name)}?for=${FOR_ORGANISATION}` : integrationPath(name);

/** Whether the portal starts a connection attempt for this provider (rather than showing a form). */
export const connectsByAttempt = (ctx: ServiceContext, provider: Provider) =>
  (provider.manifest.auth === 'oauth2' && ctx.registry.isConfigured(provider.manifest.name)) || provider.manifest.auth === 'cookie';

/** The origins a Connect button of these providers ends up at, for the page's form-action. */
export async function consentOrigins(ctx: ServiceContext, providers: readonly Provider[]): Promise<string[]> {
  const origins = await Promise.all(providers.map((p) => ctx.registry.oauthFlow(p.manifest.name)?.consentOrigin()));
  return origins.filter((o): o is string => o !== undefined);
}

/** The button that starts a connection (for the organisation when `forOrg`). */
export function connectButton(csrf: string, provider: Provider, forOrg: boolean, text: string): SafeHtml {
  return html`<form method="post" action="${integrationPath(provider.manifest.name)}/connect" class="inline">
<input type="hidden" name="_csrf" value="${csrf}">${forOrg ? html`<input type="hidden" name="for" value="${FOR_ORGANISATION}">` : ''}
<button type="submit" class="small">${text}</button></form>`;
}
