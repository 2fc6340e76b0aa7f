import { defineProvider } from '../sdk.js';

export const atlassianJira = defineProvider({
  name: 'atlassian-jira',
  version: '1.0.0',
  displayName: 'Jira',
  description: 'Atlassian Jira Cloud issues, projects, comments and transitions',
  auth: 'oauth2',
  envPrefix: 'ATLASSIAN_JIRA',
  toolPrefix: 'jira',
  apiBaseUrl: 'https://api.atlassian.com',
  oauth2: {
    authorizeUrl: 'https://auth.atlassian.com/authorize',
    tokenUrl: 'https://auth.atlassian.com/oauth/token',
    scopes: ['read:jira-work', 'write:jira-work', 'read:jira-user', 'offline_access'],
    authorizeParams: { audience: 'api.atlassian.com', prompt: 'consent' },
    // Atlassian rotates refresh tokens: each refresh returns a new one and retires the old.
    rotatesRefreshTokens: true,
    clientAuth: 'client_secret_post',
  },
});
