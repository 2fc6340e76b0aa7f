import { createRequire } from 'node:module';
import { OpenApiError } from './document.js';
import overlay from './oauth-services.json' with { type: 'json' };

/**
 * OAuth 2 settings of well-known services, so that an OpenAPI integration for one needs only a
 * client id and secret (`auth: { "type": "oauth2", "service": "notion" }`). Endpoints come from
 * grant's catalog (npm `grant`, MIT, config/oauth.json: ~200 services' authorization and token
 * URLs and scope separators), and oauth-services.json adds, per service offered here, the page of
 * the service's own documentation the settings follow, its refresh-token behaviour, the client
 * authentication and authorize parameters it wants, and endpoints where grant's are out of date.
 * Only services with such a page are offered. PKCE (S256) is sent to every service: those that do
 * not implement it ignore the parameters.
 */

interface GrantEntry {
  authorize_url?: string;
  access_url?: string;
  oauth?: number;
  scope_delimiter?: string;
}

interface OverlayEntry {
  docs: string;
  refresh: 'rotating' | 'stable' | 'none';
  authorizeUrl?: string;
  tokenUrl?: string;
  scopeSeparator?: string;
  clientAuth?: 'client_secret_post' | 'client_secret_basic';
  authorizeParams?: Record<string, string>;
}

export interface OAuthServiceSettings {
  name: string;
  authorizeUrl: string;
  tokenUrl: string;
  scopeSeparator: string;
  /** What a refresh does to the refresh token: a new one each time, the same one, or there is none. */
  refresh: OverlayEntry['refresh'];
  clientAuth?: OverlayEntry['clientAuth'];
  authorizeParams?: Record<string, string>;
  /** The service's documentation page these settings follow. */
  docs: string;
}

const grant = createRequire(import.meta.url)('grant/config/oauth.json') as Record<string, GrantEntry>;
const services = (overlay as { services: Record<string, OverlayEntry> }).services;
/** A DNS label: what `[subdomain]` in a service's URL may become, and nothing that leaves the host. */
export const SUBDOMAIN = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i;

/** The names of the services offered, sorted. */
export function oauthServiceNames(): string[] {
  return Object.keys(services)
    .filter((name) => settingsOf(name) !== undefined)
    .sort();
}

function settingsOf(name: string): Omit<OAuthServiceSettings, 'name'> | undefined {
  if (!Object.hasOwn(services, name)) return undefined;
  const own = services[name];
  const base = Object.hasOwn(grant, name) && grant[name].oauth === 2 ? grant[name] : undefined;
  const authorizeUrl = own.authorizeUrl ?? base?.authorize_url;
  const tokenUrl = own.tokenUrl ?? base?.access_url;
  if (!authorizeUrl || !tokenUrl) return undefined;
  return {
    authorizeUrl,
    tokenUrl,
    scopeSeparator: own.scopeSeparator ?? base?.scope_delimiter ?? ' ',
    refresh: own.refresh,
    ...(own.clientAuth && { clientAuth: own.clientAuth }),
    ...(own.authorizeParams && { authorizeParams: own.authorizeParams }),
    docs: own.docs,
  };
}

/**
 * The settings of `name`, with `[subdomain]` in its URLs filled (Shopify's shop, Zendesk's
 * account). Throws an OpenApiError at `auth.service` (or `auth.subdomain`) naming what is wrong.
 */
export function oauthService(name: string, options: { subdomain?: string } = {}): OAuthServiceSettings {
  const settings = settingsOf(name);
  if (!settings) {
    throw new OpenApiError(
      'auth.service',
      `"${name.slice(0, 60)}" is not a known OAuth service (known: ${oauthServiceNames().join(', ')})`,
    );
  }
  const templated = [settings.authorizeUrl, settings.tokenUrl].some((u) => u.includes('[subdomain]'));
  if (templated && !options.subdomain) throw new OpenApiError('auth.subdomain', `${name} needs the account's subdomain (e.g. "acme")`);
  if (!templated && options.subdomain) throw new OpenApiError('auth.subdomain', `${name}'s endpoints have no subdomain to fill`);
  if (options.subdomain && !SUBDOMAIN.test(options.subdomain))
    throw new OpenApiError('auth.subdomain', 'expected one DNS label, e.g. "acme"');
  const fill = (url: string) => url.replace('[subdomain]', options.subdomain ?? '');
  return { name, ...settings, authorizeUrl: fill(settings.authorizeUrl), tokenUrl: fill(settings.tokenUrl) };
}
