import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

/** An upstream MCP server answered a redirect: nothing is sent where it points. */
class UpstreamRedirectRefused extends Error {
  readonly code = 'upstream_redirect_refused';
  constructor(status: number, target: string) {
    super(
      `the upstream MCP server answered HTTP ${status}, a redirect to ${target}; Switchboard follows no redirect of an upstream MCP server (its credential goes only to the configured URL), so nothing was sent there`,
    );
    this.name = 'UpstreamRedirectRefused';
  }
}

/**
 * A fetch for an MCP session that fails on any redirect answer. The SDK's transports follow a
 * same-origin 307/308 themselves (`redirectPolicy: 'same-origin'`), re-sending the body and the
 * credential to whatever path the server names; failing here, before the transport sees the
 * answer, keeps every request, and the credential, at the configured URL it was granted for.
 */
export function refusingRedirects(fetch: FetchLike): FetchLike {
  return async (input, init) => {
    const res = await fetch(input, init);
    if (res.status < 300 || res.status > 399) return res;
    await res.body?.cancel().catch(() => {});
    throw new UpstreamRedirectRefused(res.status, redirectTarget(res.headers.get('location'), String(input)));
  };
}

/** Where a redirect points, without its query or fragment (they may carry anything). */
function redirectTarget(location: string | null, from: string): string {
  if (!location || !URL.canParse(location, from)) return 'nowhere readable';
  const target = new URL(location, from);
  return `${target.origin}${target.pathname}`;
}
