import { defineProvider } from '../../sdk/index.js';
import { linearGraphql } from './api.js';
import { issueTools } from './tools/issues.js';
import { teamTools } from './tools/teams.js';

/**
 * Linear, connected with a personal API key in the portal (https://linear.app/settings/account/security).
 * A personal key rides bare in the Authorization header — Linear takes `Bearer` only for OAuth tokens.
 */
export const linear = defineProvider(
  {
    name: 'linear',
    version: '1.0.0',
    displayName: 'Linear',
    description: 'Linear issues and teams',
    auth: 'apikey',
    envPrefix: 'LINEAR',
    toolPrefix: 'linear',
    apiBaseUrl: 'https://api.linear.app',
    apiKeyFields: [{ name: 'apiKey', label: 'Personal API key', secret: true, placeholder: 'lin_api_…' }],
  },
  [...issueTools, ...teamTools],
  {
    authorize(credential, headers) {
      if (credential.type === 'apikey' && credential.fields.apiKey) headers.set('authorization', credential.fields.apiKey);
    },
    async identify(ctx) {
      const { viewer } = await linearGraphql<{ viewer: { id: string; name: string; email: string | null } }>(
        ctx,
        'query Viewer { viewer { id name email } }',
      );
      return { externalId: viewer.id, label: viewer.email || viewer.name };
    },
  },
);
