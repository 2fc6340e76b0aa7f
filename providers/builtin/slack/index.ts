import { defineProvider } from '../../sdk/index.js';
import { slackRequest } from './api.js';
import { channelTools } from './tools/channels.js';
import { messageTools } from './tools/messages.js';
import { reactionTools } from './tools/reactions.js';
import { userTools } from './tools/users.js';

export const slack = defineProvider(
  {
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
  },
  [...messageTools, ...channelTools, ...reactionTools, ...userTools],
  {
    // A Slack account is a user in a workspace; user ids are only unique per team.
    async identify(ctx) {
      const me = await slackRequest<{ team_id: string; user_id: string; team: string; user: string }>(ctx, 'auth.test', {}, 'read');
      return { externalId: `${me.team_id}:${me.user_id}`, label: `${me.user}@${me.team}` };
    },
  },
);
