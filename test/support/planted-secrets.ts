import type Provider from 'oidc-provider';

/**
 * Adds every secret an authorization server hands out or receives at its token endpoint (codes,
 * PKCE verifiers, access and refresh tokens) to `planted`, for leak checks: none may reach logs,
 * workflow history, audit rows or answers.
 */
export function plantGrantSecrets(provider: Provider, planted: Set<string>): void {
  provider.on('grant.success', (ctx: any) => {
    for (const v of [
      ctx.oidc.params?.code,
      ctx.oidc.params?.code_verifier,
      ctx.oidc.params?.refresh_token,
      ctx.body?.access_token,
      ctx.body?.refresh_token,
    ]) {
      if (typeof v === 'string') planted.add(v);
    }
  });
}
