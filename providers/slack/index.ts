import { defineProvider } from '../sdk.js';

export const slack = defineProvider({
  name: 'slack',
  version: '1.0.0',
  displayName: 'Slack',
  description: 'Slack messages, channels, reactions and users',
  auth: 'oauth2',
  envPrefix: 'SLACK',
  toolPrefix: 'slack',
  apiBaseUrl: 'https://slack.com/api',
  oauth2: {
    authorizeUrl: 'https://slack.com/oauth/v2/authorize',
    tokenUrl: 'https://slack.com/api/oauth.v2.access',
    revokeUrl: 'https://slack.com/api/auth.revoke',
    scopes: ['channels:read', 'channels:history', 'chat:write', 'reactions:write', 'users:read', 'search:read'],
    clientAuth: 'client_secret_post',
  },
});
