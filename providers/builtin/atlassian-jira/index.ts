import { defineProvider } from '../../sdk/index.js';
import { accessibleSites, jiraRequest } from './api.js';
import type { JiraUser } from './shapes.js';
import { commentTools } from './tools/comments.js';
import { workflowTools } from './tools/issue-workflow.js';
import { issueTools } from './tools/issues.js';
import { projectTools } from './tools/projects.js';

export const atlassianJira = defineProvider(
  {
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
  },
  [...issueTools, ...commentTools, ...workflowTools, ...projectTools],
  {
    // An account is a person on a site: the same person on two sites is two accounts.
    async identify(ctx) {
      const [site] = await accessibleSites(ctx);
      if (!site) throw new Error('This Atlassian connection cannot reach any Jira site');
      const me = await jiraRequest<JiraUser>(ctx, site.id, 'GET', '/myself');
      return { externalId: `${site.id}:${me.accountId}`, label: `${me.displayName}@${site.name}` };
    },
  },
);
