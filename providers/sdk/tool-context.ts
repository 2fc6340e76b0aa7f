import { isInsideApiBase, OutsideApiBase, parseApiBase, resolveInsideApiBase } from './api-base.js';
import type { Credential, Provider, ToolContext, ToolLogger, ToolServices } from './index.js';
import { capResponse, DEFAULT_RESPONSE_MAX_BYTES } from './response-cap.js';

/** Redirects followed inside the API base before giving up (fetch's own limit is 20). */
const MAX_REDIRECTS = 5;

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
 * the credential and obeys `signal`, so a deadline really stops the request. The fetch sends
 * nothing outside the base (other origins, or paths that `..` lifts above the base path) and
 * follows redirects itself, only while they stay inside it, so the credential never leaves the
 * base. Every response body is cut off at `maxResponseBytes`.
 */
export function createToolContext(input: {
  provider: Provider;
  credential: Credential;
  apiBaseUrl: string;
  signal: AbortSignal;
  logger: ToolLogger;
  caller: { tenantId: string; userId: string };
  services?: ToolServices;
  /** CONNECTIONS_PROVIDER_RESPONSE_MAX_BYTES; default 10 MiB. */
  maxResponseBytes?: number;
}): ToolContext {
  const { provider, credential, apiBaseUrl, signal } = input;
  const maxResponseBytes = input.maxResponseBytes ?? DEFAULT_RESPONSE_MAX_BYTES;
  return {
    credential,
    apiBaseUrl,
    signal,
    logger: input.logger,
    caller: input.caller,
    services: input.services,
    async fetch(path, init = {}) {
      const first = resolveInsideApiBase(path, apiBaseUrl);
      const headers = new Headers(init.headers);
      if (!headers.has('accept')) headers.set('accept', 'application/json');
      if (!headers.has('user-agent')) headers.set('user-agent', 'switchboard');
      applyCredential(provider, credential, headers);
      const res = await fetchInsideBase(
        first,
        { ...init, headers, signal: init.signal ? AbortSignal.any([init.signal, signal]) : signal },
        apiBaseUrl,
      );
      return capResponse(res, maxResponseBytes);
    },
  };
}

const REDIRECT = new Set([301, 302, 303, 307, 308]);

/**
 * fetch with `redirect: 'manual'` underneath: a caller that asked for 'manual' gets the 3xx as it
 * is; otherwise redirects are followed by hand, each Location checked against the base before the
 * credential-carrying headers go there. fetch's own `follow` would drop Authorization only on a
 * cross-origin hop, and would carry it to a same-origin path outside the base.
 */
async function fetchInsideBase(url: URL, init: RequestInit & { headers: Headers }, apiBaseUrl: string): Promise<Response> {
  const mode = init.redirect ?? 'follow';
  const base = parseApiBase(apiBaseUrl);
  let current = url;
  let method = (init.method ?? 'GET').toUpperCase();
  let body = init.body;
  for (let hop = 0; ; hop++) {
    const res = await fetch(current, { ...init, method, body, redirect: 'manual' });
    const location = res.headers.get('location');
    if (!REDIRECT.has(res.status) || location === null || mode === 'manual') return res;
    await res.body?.cancel().catch(() => {});
    if (mode === 'error') throw new TypeError(`The provider redirected ${method} ${current.pathname} and redirects were refused`);
    if (hop >= MAX_REDIRECTS) throw new Error(`The provider redirected more than ${MAX_REDIRECTS} times`);
    let next: URL;
    try {
      next = new URL(location, current);
    } catch {
      throw new OutsideApiBase(location, apiBaseUrl);
    }
    if (!isInsideApiBase(next, base)) throw new OutsideApiBase(`${next.origin}${next.pathname}`, apiBaseUrl);
    // As fetch does: 303 (and 301/302 after a POST) become a GET without a body.
    if ((res.status === 303 && method !== 'HEAD') || ((res.status === 301 || res.status === 302) && method === 'POST')) {
      method = 'GET';
      body = undefined;
      init.headers.delete('content-type');
      init.headers.delete('content-length');
    }
    current = next;
  }
}
