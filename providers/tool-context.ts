import type { Credential, Provider, ToolContext, ToolLogger, ToolServices } from './sdk.js';

/** The default way a credential rides on a request. */
export function applyCredential(provider: Provider, credential: Credential, headers: Headers): void {
  if (provider.authorize) {
    provider.authorize(credential, headers);
    return;
  }
  if (credential.type === 'oauth2') headers.set('authorization', `Bearer ${credential.accessToken}`);
  if (credential.type === 'cookie') {
    headers.set('cookie', credential.cookies.map((c) => `${c.name}=${c.value}`).join('; '));
  }
}

/**
 * Builds the context a tool runs with: a fetch rooted at the provider's API base URL that adds
 * the credential and obeys `signal`, so a deadline really stops the request.
 */
export function createToolContext(input: {
  provider: Provider;
  credential: Credential;
  apiBaseUrl: string;
  signal: AbortSignal;
  logger: ToolLogger;
  caller: { tenantId: string; userId: string };
  services?: ToolServices;
}): ToolContext {
  const { provider, credential, apiBaseUrl, signal } = input;
  return {
    credential,
    apiBaseUrl,
    signal,
    logger: input.logger,
    caller: input.caller,
    services: input.services,
    fetch(path, init = {}) {
      const url = /^https?:\/\//.test(path) ? path : `${apiBaseUrl}${path.startsWith('/') ? '' : '/'}${path}`;
      const headers = new Headers(init.headers);
      if (!headers.has('accept')) headers.set('accept', 'application/json');
      if (!headers.has('user-agent')) headers.set('user-agent', 'switchboard');
      applyCredential(provider, credential, headers);
      return fetch(url, { ...init, headers, signal: init.signal ? AbortSignal.any([init.signal, signal]) : signal });
    },
  };
}
