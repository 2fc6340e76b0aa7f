import type { AllowedHost } from '../core/network-policy.js';
import { type UpstreamEntry, upstreamEntrySchema } from '../core/upstream-entry.js';

/** The demo's integration name: what agents connect (`demo`) and the prefix of its tools (`demo_list_tasks`). */
const DEMO_INTEGRATION_NAME = 'demo';

/**
 * What Switchboard is given for the demo: an ordinary `auth: oauth2` upstream entry with nothing
 * configured but the URL (the authorization server, Switchboard's client there and the scopes are
 * discovered, as for any remote MCP server), and the one exception to the network policy it needs.
 */
export interface DemoIntegration {
  entry: UpstreamEntry;
  /**
   * The demo's own origin (127.0.0.1 and its port), which the demo provider alone may reach although
   * it is loopback. Not UPSTREAM_MCP_ALLOWED_HOSTS: no other server, the operator's or a tenant's,
   * gains anything from it (surfaces/compose-services.ts builds only the demo provider with it).
   */
  allowedHosts: AllowedHost[];
}

export function demoIntegration(mcpUrl: string): DemoIntegration {
  const url = new URL(mcpUrl);
  return {
    entry: upstreamEntrySchema.parse({
      name: DEMO_INTEGRATION_NAME,
      displayName: 'Demo Tasks (demo)',
      url: mcpUrl,
      description:
        'Demo: a to-do list behind a local OAuth server, served by npm start so the first session needs no account anywhere. Development only; refused in production.',
      auth: { type: 'oauth2' },
    }),
    allowedHosts: [{ host: url.hostname, port: Number(url.port) }],
  };
}
