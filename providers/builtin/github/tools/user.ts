import { z } from 'zod';
import { defineTool } from '../../../sdk/index.js';
import { githubRequest } from '../api.js';
import type { GhUser } from '../shapes.js';

export const userTools = [
  defineTool({
    name: 'get_authenticated_user',
    description:
      'Who the connection is on GitHub (the connected account, "who am I"): the user it acts as, with login, name, email, html_url.',
    access: 'read',
    scopes: [],
    input: z.object({}),
    async run(_args, ctx) {
      const user = await githubRequest<GhUser & { name: string | null; email: string | null }>(ctx, 'GET', '/user');
      return { login: user.login, name: user.name, email: user.email, html_url: user.html_url };
    },
  }),
];
