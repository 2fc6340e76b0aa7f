import Provider, { errors } from 'oidc-provider';
import { escapeHtml } from '../surfaces/portal/html.js';
import type { DemoState } from './demo-state.js';
import { oauthRecords } from './oauth-records.js';

/** What the demo's access tokens allow; every tool needs both (demo/mcp-server.ts). */
export const DEMO_SCOPES = {
  'tasks:read': 'see your demo tasks',
  'tasks:write': 'add, complete and delete your demo tasks',
} as const;

export interface DemoAuthorizationServerOptions {
  /** The authorization server's issuer: the demo's origin. */
  issuer: string;
  /** The one resource it issues tokens for: the demo MCP server's URL (RFC 8707). */
  mcpUrl: string;
  /** Life of an access token, in seconds: short, so that Switchboard's refresh shows within a minute. */
  accessTokenTtlSec: number;
  state: DemoState;
  /** A line for the terminal on each sign-in, consent, token, refresh and revocation. */
  log: (line: string) => void;
}

/**
 * The demo's OAuth 2 authorization server: oidc-provider (the same library Switchboard's tests use
 * as a real one) configured the way a remote MCP server's authorization server is — dynamic client
 * registration (RFC 7591) with management (RFC 7592), PKCE required, RFC 8707 resource indicators
 * with opaque access tokens whose audience is the MCP server, rotating refresh tokens, revocation
 * (RFC 7009) and RFC 9207 `iss`. Its sign-in and consent pages are the demo's own
 * (sign-in-and-consent.ts): anyone may sign in under any name, which is why production refuses it.
 */
export function demoAuthorizationServer(options: DemoAuthorizationServerOptions): Provider {
  const { issuer, mcpUrl, state, log } = options;
  const provider = new Provider(issuer, {
    adapter: oauthRecords(state),
    jwks: { keys: [state.data.signingKey as never] },
    cookies: { keys: state.data.cookieKeys },
    clients: [],
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      // So Switchboard can ask whether its registration is still known (RFC 7592 read) before sending a person to consent.
      registrationManagement: { enabled: true },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: async (_ctx, _client, oneOf) => oneOf ?? mcpUrl,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx, indicator) => {
          if (indicator !== mcpUrl) throw new errors.InvalidTarget(`this authorization server issues tokens for ${mcpUrl} only`);
          return {
            scope: Object.keys(DEMO_SCOPES).join(' '),
            audience: mcpUrl,
            accessTokenFormat: 'opaque',
            accessTokenTTL: options.accessTokenTtlSec,
          };
        },
      },
    },
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    ttl: {
      AccessToken: options.accessTokenTtlSec,
      AuthorizationCode: 60,
      Interaction: 600,
      Session: 24 * 3600,
      Grant: 14 * 24 * 3600,
      RefreshToken: 14 * 24 * 3600,
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    // Each authorization asks for consent again (a person trying the demo sees the page every time);
    // only the consent just given counts, never an earlier grant of the session.
    loadExistingGrant: async (ctx) => {
      const grantId = ctx.oidc.result?.consent?.grantId;
      return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined;
    },
    findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
    renderError: (ctx, out) => {
      ctx.type = 'html';
      ctx.body = `<!doctype html><meta charset="utf-8"><title>Demo authorization server</title>
<h1>Demo authorization server</h1><p>${escapeHtml(out.error)}: ${escapeHtml(out.error_description ?? '')}</p>`;
    },
  });
  provider.proxy = false;

  const accountOfGrant = (ctx: { oidc: { entities: { Grant?: { accountId?: string } } } }) => ctx.oidc.entities.Grant?.accountId ?? '?';
  provider.on('registration_create.success', (_ctx, client) => log(`registered the client "${client.clientName ?? client.clientId}"`));
  provider.on('grant.success', (ctx) => {
    const type = String(ctx.oidc.params?.grant_type);
    const grantId = ctx.oidc.entities.Grant?.jti;
    if (type === 'authorization_code')
      log(`issued ${accountOfGrant(ctx)} an access token (${options.accessTokenTtlSec} s) and a refresh token`);
    if (type === 'refresh_token' && grantId) {
      state.data.refreshes[grantId] = (state.data.refreshes[grantId] ?? 0) + 1;
      state.save();
      log(`refreshed ${accountOfGrant(ctx)}'s access token (refresh ${state.data.refreshes[grantId]} of this grant)`);
    }
  });
  provider.on('grant.revoked', (ctx) => {
    const token = ctx.oidc.entities.RefreshToken ?? ctx.oidc.entities.AccessToken;
    log(`revoked ${token?.accountId ?? 'an account'}'s grant (a disconnect): its tokens no longer work`);
  });
  provider.on('server_error', (_ctx, err) => log(`error: ${err.message}`));
  return provider;
}
