import Provider from 'oidc-provider';
import { startLocalServer } from './local-server.js';
import { freePort } from './ports.js';

/**
 * A real OAuth 2.0 / OIDC authorization server (oidc-provider) in the test process. It stands in
 * for GitHub, Jira and Slack through their URL overrides: PKCE, refresh tokens, short-lived
 * access tokens, and — for the Jira client — rotating refresh tokens. Its dev interactions (a
 * login form taking any name, a consent button) are driven by the real browser.
 */

export interface OAuthClientSpec {
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
  rotateRefreshTokens?: boolean;
}

export interface TestAuthServer {
  issuer: string;
  provider: Provider;
  /** Successful token grants, by grant type (refresh storms count `refresh_token`). */
  grants: { authorization_code: number; refresh_token: number };
  /** The subject (login) an access token was issued to, or undefined when it is not valid. */
  subjectOf(accessToken: string): Promise<string | undefined>;
  /**
   * Mints an access token for `login` on `clientId` directly through the provider's models, as a
   * completed authorization-code grant would, without a browser.
   */
  issueAccessToken(login: string, clientId: string, scopes?: string[]): Promise<string>;
  /** An access token and a refresh token for `login`, without a browser. */
  issueTokens(login: string, clientId: string, scopes?: string[]): Promise<{ accessToken: string; refreshToken: string }>;
  revokeAccessToken(token: string): Promise<void>;
  revokeRefreshToken(token: string): Promise<void>;
  /**
   * Per-login claims over the defaults (`email` from the login, `email_verified: true`): e.g. an
   * account whose email the provider has not verified, or a second account claiming someone's email.
   */
  accountClaims: Map<string, Record<string, unknown>>;
  /** Env for one provider prefix: client id/secret and authorize/token/revoke URLs. */
  envFor(prefix: string, client: OAuthClientSpec): Record<string, string>;
  close(): Promise<void>;
}

export const TEST_SCOPES = [
  'openid',
  'email',
  'profile',
  'offline_access',
  'repo',
  'read:user',
  'read:jira-work',
  'write:jira-work',
  'read:jira-user',
  'channels:read',
  'channels:history',
  'chat:write',
  'reactions:write',
  'users:read',
  'search:read',
];

export async function startAuthServer(clients: OAuthClientSpec[], options: { accessTokenTtlSec?: number } = {}): Promise<TestAuthServer> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const rotating = new Set(clients.filter((c) => c.rotateRefreshTokens).map((c) => c.clientId));
  const accountClaims = new Map<string, Record<string, unknown>>();
  const provider = new Provider(issuer, {
    clients: clients.map((c) => ({
      client_id: c.clientId,
      client_secret: c.clientSecret,
      redirect_uris: c.redirectUris,
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_post',
    })),
    scopes: TEST_SCOPES,
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: true },
      revocation: { enabled: true },
      introspection: { enabled: true },
    },
    // Refresh tokens without requiring offline_access, as GitHub/Jira/Slack apps get them.
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: (ctx) => rotating.has(ctx.oidc.client?.clientId ?? ''),
    ttl: {
      AccessToken: options.accessTokenTtlSec ?? 3600,
      AuthorizationCode: 60,
      RefreshToken: 14 * 24 * 3600,
      Grant: 14 * 24 * 3600,
      Interaction: 600,
      Session: 3600,
      IdToken: 3600,
    },
    findAccount: async (_ctx, sub) => ({
      accountId: sub,
      claims: async () => ({
        sub,
        email: sub.includes('@') ? sub : `${sub}@example.com`,
        email_verified: true,
        name: sub,
        ...accountClaims.get(sub),
      }),
    }),
    cookies: { keys: ['test-cookie-key-not-a-secret'] },
    // Grants are created by the consent prompt of the dev interactions.
    loadExistingGrant: async (ctx) => {
      const grantId = ctx.oidc.result?.consent?.grantId || ctx.oidc.session?.grantIdFor(ctx.oidc.client!.clientId);
      return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined;
    },
  });
  provider.proxy = false;
  // Quiet its warnings about dev interactions in tests.
  provider.on('server_error', () => {});

  const grants = { authorization_code: 0, refresh_token: 0 };
  provider.on('grant.success', (ctx) => {
    const type = ctx.oidc.params?.grant_type as keyof typeof grants;
    if (type in grants) grants[type]++;
  });

  const { close } = await startLocalServer(provider.callback(), port);

  /** Tokens minted directly by the server's own models, as a code exchange would mint them. */
  async function issue(login: string, clientId: string, scopes: string[], withRefresh: boolean) {
    const client = await provider.Client.find(clientId);
    if (!client) throw new Error(`unknown test client ${clientId}`);
    const scope = scopes.join(' ');
    const grant = new provider.Grant({ accountId: login, clientId });
    grant.addOIDCScope(scope);
    const grantId = await grant.save();
    const accessToken = await new provider.AccessToken({ accountId: login, client, grantId, gty: 'authorization_code', scope }).save();
    const refreshToken = withRefresh
      ? await new provider.RefreshToken({ accountId: login, client, grantId, gty: 'authorization_code', scope }).save()
      : undefined;
    return { accessToken, refreshToken };
  }

  return {
    issuer,
    provider,
    grants,
    accountClaims,
    async subjectOf(accessToken) {
      const token = await provider.AccessToken.find(accessToken);
      return token && !token.isExpired ? token.accountId : undefined;
    },
    async issueAccessToken(login, clientId, scopes = TEST_SCOPES) {
      return (await issue(login, clientId, scopes, false)).accessToken;
    },
    async issueTokens(login, clientId, scopes = TEST_SCOPES) {
      const { accessToken, refreshToken } = await issue(login, clientId, scopes, true);
      return { accessToken, refreshToken: refreshToken as string };
    },
    async revokeAccessToken(token) {
      await (await provider.AccessToken.find(token))?.destroy();
    },
    async revokeRefreshToken(token) {
      await (await provider.RefreshToken.find(token))?.destroy();
    },
    envFor(prefix, client) {
      return {
        [`${prefix}_CLIENT_ID`]: client.clientId,
        [`${prefix}_CLIENT_SECRET`]: client.clientSecret,
        [`${prefix}_AUTHORIZE_URL`]: `${issuer}/auth`,
        [`${prefix}_TOKEN_URL`]: `${issuer}/token`,
        [`${prefix}_REVOKE_URL`]: `${issuer}/token/revocation`,
      };
    },
    close,
  };
}
