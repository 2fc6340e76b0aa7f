import type { AllowedHost } from '../../../core/network-policy.js';
import { checkUrlShape, type EgressErrors, type EgressOptions, type GuardedFetch, guardedFetch } from '../../sdk/guarded-fetch.js';
import { McpAuthError } from './oauth-errors.js';

/** Metadata documents are a few kilobytes; a megabyte is generous and still harmless. */
const DEFAULT_METADATA_MAX_BYTES = 1024 * 1024;

/** How the shared guarded fetch fails for OAuth discovery, registration and tokens: McpAuthError codes. */
const mcpAuthEgressErrors: EgressErrors = {
  refused: (why, url) =>
    new McpAuthError(
      'egress_refused',
      url ? `Refused to fetch ${url.origin}${url.pathname}: ${why}` : `Refused to fetch a value that is ${why}`,
    ),
  unreachable: (message) => new McpAuthError('metadata_unavailable', message),
  tooLarge: (maxBytes, url) => new McpAuthError('response_too_large', `${url.origin}${url.pathname} answered more than ${maxBytes} bytes`),
};

/** The shared guarded fetch (providers/sdk/guarded-fetch.ts) with McpAuthError codes and a metadata-sized cap. */
export function mcpAuthFetch(options: EgressOptions = {}): GuardedFetch {
  return guardedFetch({
    ...options,
    maxResponseBytes: options.maxResponseBytes ?? DEFAULT_METADATA_MAX_BYTES,
    errors: mcpAuthEgressErrors,
  });
}

/** checkUrlShape failing with McpAuthError `egress_refused`. */
export const checkAuthUrlShape = (raw: string | URL, options: { allowedHosts?: readonly AllowedHost[] }): URL =>
  checkUrlShape(raw, options.allowedHosts, mcpAuthEgressErrors);
