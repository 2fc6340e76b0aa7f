import type { EgressErrors } from '../sdk/guarded-fetch.js';
import { ResponseTooLarge } from '../sdk/http.js';
import { RequestOutcomeUnknown } from '../sdk/transport-loss.js';

/** The upstream's host is not one Switchboard may reach (loopback, private, metadata, …). */
export class UpstreamAddressRefused extends Error {
  readonly code = 'upstream_address_refused';
  constructor(reason: string) {
    super(`Switchboard does not connect to this upstream MCP server: ${reason} (an operator may allow it in UPSTREAM_MCP_ALLOWED_HOSTS)`);
    this.name = 'UpstreamAddressRefused';
  }
}

/** How the shared guarded fetch fails for an upstream MCP session. */
export const upstreamEgressErrors: EgressErrors = {
  refused: (why) => new UpstreamAddressRefused(why),
  unreachable: (message) => new Error(message),
  tooLarge: (maxBytes) => new ResponseTooLarge(maxBytes),
  lost: (message) => new RequestOutcomeUnknown(message),
};
