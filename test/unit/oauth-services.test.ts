import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { openapiEntrySchema } from '../../core/openapi-entry.js';
import { parseDocument } from '../../providers/openapi/document.js';
import { oauthService, oauthServiceNames } from '../../providers/openapi/oauth-services.js';
import { openapiProvider } from '../../providers/openapi/provider.js';
import { ProviderRegistry } from '../../providers/registry.js';

// The catalog of well-known OAuth 2 services an OpenAPI entry names with `auth.service` (issue 32).
// Attacker: a tenant administrator's (or an operator's) entry choosing a service name or a
// subdomain that would send consent or tokens somewhere else.

const grant = createRequire(import.meta.url)('grant/config/oauth.json') as Record<string, { authorize_url?: string; access_url?: string }>;
const doc = parseDocument(
  JSON.stringify({ openapi: '3.0.3', info: { title: 'T', version: '1' }, servers: [{ url: 'https://api.example.com' }], paths: {} }),
);
const entry = (auth: Record<string, unknown>) =>
  openapiEntrySchema.parse({ name: 'svc', displayName: 'Service', document: './x.json', auth: { type: 'oauth2', ...auth } });

describe('the OAuth service catalog', () => {
  it('offers at least 25 services, each with https endpoints, its documentation page and its refresh behaviour', () => {
    const names = oauthServiceNames();
    expect(names.length).toBeGreaterThanOrEqual(25);
    for (const wanted of [
      'google',
      'microsoft',
      'salesforce',
      'hubspot',
      'notion',
      'asana',
      'gitlab',
      'bitbucket',
      'dropbox',
      'box',
      'zoom',
      'shopify',
      'zendesk',
      'intercom',
      'airtable',
      'figma',
      'discord',
      'spotify',
    ]) {
      expect(names).toContain(wanted);
    }
    for (const name of names) {
      const settings = oauthService(name, name === 'shopify' || name === 'zendesk' ? { subdomain: 'acme' } : {});
      for (const url of [settings.authorizeUrl, settings.tokenUrl, settings.docs])
        expect(new URL(url).protocol, `${name}: ${url}`).toBe('https:');
      expect(['rotating', 'stable', 'none']).toContain(settings.refresh);
    }
  });

  it("takes endpoints from grant's catalog unless a service's own documentation says otherwise", () => {
    expect(oauthService('google')).toMatchObject({ authorizeUrl: grant.google.authorize_url, tokenUrl: grant.google.access_url });
    // grant still has Slack's v1 endpoints; Slack's OAuth v2 is what its documentation describes.
    expect(oauthService('slack')).toMatchObject({ tokenUrl: 'https://slack.com/api/oauth.v2.access', scopeSeparator: ',' });
  });

  it('refuses an unknown service by name, listing the known ones', () => {
    expect(() => oauthService('evil')).toThrow(/auth.service: "evil" is not a known OAuth service \(known: airtable, asana/);
  });

  it('fills a subdomain only with one DNS label, and only where the service has one', () => {
    expect(oauthService('shopify', { subdomain: 'acme' }).authorizeUrl).toBe('https://acme.myshopify.com/admin/oauth/authorize');
    expect(() => oauthService('shopify')).toThrow(/auth.subdomain: shopify needs the account's subdomain/);
    for (const subdomain of ['evil.com/x', 'evil.com#', 'a.b', '-acme', 'acme@evil.com', `${'a'.repeat(64)}`]) {
      expect(() => oauthService('shopify', { subdomain }), subdomain).toThrow(/auth.subdomain: expected one DNS label/);
    }
    expect(() => oauthService('google', { subdomain: 'acme' })).toThrow(/google's endpoints have no subdomain to fill/);
  });

  it("makes an OpenAPI entry's OAuth from the service: endpoints, scope separator, client auth, refresh", () => {
    const { provider } = openapiProvider(entry({ service: 'slack', scopes: ['chat:write', 'channels:read'] }), doc);
    expect(provider.manifest.oauth2).toMatchObject({
      authorizeUrl: 'https://slack.com/oauth/v2/authorize',
      tokenUrl: 'https://slack.com/api/oauth.v2.access',
      scopeSeparator: ',',
      rotatesRefreshTokens: true,
      scopes: ['chat:write', 'channels:read'],
    });
    expect(openapiProvider(entry({ service: 'notion' }), doc).provider.manifest.oauth2).toMatchObject({
      clientAuth: 'client_secret_basic',
    });
    const registry = new ProviderRegistry([provider], { svc: { clientId: 'id', clientSecret: 'secret', urls: {} } } as never);
    expect(registry.oauth2('svc')).toMatchObject({ scopeSeparator: ',', authorizeUrl: 'https://slack.com/oauth/v2/authorize' });
  });

  it('refuses an entry that names a service and its own endpoints, or a service and the GitHub app', () => {
    const parse = (auth: Record<string, unknown>) =>
      openapiEntrySchema.safeParse({ name: 'svc', displayName: 'S', document: './x.json', auth: { type: 'oauth2', ...auth } });
    expect(parse({ service: 'google', authorizeUrl: 'https://evil.example/authorize' }).error?.issues[0].message).toMatch(
      /"service" brings its own endpoints/,
    );
    expect(parse({ service: 'google', app: 'github' }).success).toBe(false);
    expect(parse({ service: 'Google!' }).success).toBe(false);
  });
});
