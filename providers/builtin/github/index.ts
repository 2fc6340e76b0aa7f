import { defineProvider } from '../../sdk/index.js';
import { githubRequest } from './api.js';
import { contentTools } from './tools/contents.js';
import { issueTools } from './tools/issues.js';
import { pullTools } from './tools/pulls.js';
import { repoTools } from './tools/repos.js';
import { searchTools } from './tools/search.js';
import { userTools } from './tools/user.js';

export const github = defineProvider(
  {
    name: 'github',
    version: '1.0.0',
    displayName: 'GitHub',
    description: 'GitHub repositories, issues, pull requests, code and users',
    auth: 'oauth2',
    envPrefix: 'GITHUB',
    toolPrefix: 'github',
    apiBaseUrl: 'https://api.github.com',
    oauth2: {
      authorizeUrl: 'https://github.com/login/oauth/authorize',
      tokenUrl: 'https://github.com/login/oauth/access_token',
      scopes: ['repo', 'read:user'],
      clientAuth: 'client_secret_post',
    },
  },
  [...repoTools, ...issueTools, ...pullTools, ...contentTools, ...searchTools, ...userTools],
  {
    async identify(ctx) {
      const user = await githubRequest<{ id: number; login: string }>(ctx, 'GET', '/user');
      return { externalId: String(user.id), label: user.login };
    },
  },
);
