import { z } from 'zod';
import { listUsableAccounts } from '../../accounts/store/accounts.js';
import { withCookieSessionStatus } from '../../connections/cookie-session-status.js';
import { defineMetaTool } from '../../meta-tool.js';
import { enabledProviders } from '../caller-tenant.js';

export const listIntegrations = defineMetaTool({
  name: 'list_integrations',
  description:
    'List the integrations this user can use: name, version and whether the user is connected now. ' +
    'For one that is not connected, call connect with its name (oauth2 and cookie) or send the user to the portal (apikey).',
  input: z.object({}).strict(),
  async handler(ctx, caller) {
    const providers = await enabledProviders(ctx, caller);
    const accounts = await withCookieSessionStatus(ctx, await listUsableAccounts(ctx.pool, caller));
    // Connected, computed live: built-ins always; otherwise a usable account with a working credential.
    const connected = new Set(accounts.filter((a) => a.status === 'active' && a.hasCredential).map((a) => a.integration));
    return {
      integrations: providers.map((p) => ({
        name: p.manifest.name,
        version: p.manifest.version,
        connected: p.manifest.auth === 'none' || connected.has(p.manifest.name),
      })),
    };
  },
});
