import { insertAccount } from '../../features/accounts/store/accounts.js';
import type { TestAuthServer } from './oauth-server.js';
import type { Stack, TestUser } from './stack.js';

export interface GithubAccountOptions {
  label?: string;
  /** An organisation account (no owner) instead of the user's own. */
  tenantScoped?: boolean;
  sharingRoles?: string[];
  /** Store the access token as already expired, so the first call refreshes it. */
  expired?: boolean;
  /** How long the stored access token counts as valid (default an hour); ignored with `expired`. */
  validForSec?: number;
  scopes?: string[];
}

/**
 * Stores a GitHub account for `user` whose tokens the test authorization server really issued —
 * what a completed connection leaves behind, without driving a browser.
 */
export async function connectGithubAccount(
  stack: Stack,
  auth: TestAuthServer,
  clientId: string,
  user: TestUser,
  login: string,
  options: GithubAccountOptions = {},
) {
  const tokens = await auth.issueTokens(login, clientId);
  const account = await insertAccount(stack.services.pool, stack.services.keyring, {
    tenantId: user.user.tenantId,
    ownerUserId: options.tenantScoped ? null : user.user.id,
    integration: 'github',
    label: options.label ?? login,
    sharingRoles: options.sharingRoles,
    grantedScopes: options.scopes ?? ['repo', 'read:user'],
    accessExpiresAt: new Date(Date.now() + (options.expired ? -1 : (options.validForSec ?? 3600)) * 1000),
    credential: { type: 'oauth2', accessToken: tokens.accessToken, refreshToken: tokens.refreshToken },
  });
  return { account, tokens };
}
