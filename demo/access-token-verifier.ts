import { InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type Provider from 'oidc-provider';

/** What `extra` may read of a found token. */
type FoundToken = { accountId?: string; grantId?: string; iat?: number };

/**
 * The MCP SDK's token verifier over an oidc-provider's own access tokens: an unknown or expired
 * token is refused; a valid one answers its client, scopes, expiry and audience (the resource it
 * was issued for), with `extra` from the token as the MCP server needs it.
 */
export function accessTokenVerifier(provider: Provider, extra: (token: FoundToken) => Record<string, unknown>) {
  return {
    async verifyAccessToken(token: string): Promise<AuthInfo> {
      const found = await provider.AccessToken.find(token);
      if (!found || found.isExpired) throw new InvalidTokenError('The access token is not valid');
      const audience = Array.isArray(found.aud) ? found.aud[0] : found.aud;
      return {
        token,
        clientId: found.clientId ?? '',
        scopes: (found.scope ?? '').split(' ').filter(Boolean),
        expiresAt: found.exp,
        ...(audience && { resource: new URL(audience) }),
        extra: extra(found),
      };
    },
  };
}
