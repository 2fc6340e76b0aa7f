import { z } from 'zod';
import { readJson } from '../http.js';
import { defineProvider, defineTool } from '../sdk.js';

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
  [
    defineTool({
      name: 'get_authenticated_user',
      description: 'Return the GitHub user the connection acts as: login, name, email, html_url.',
      access: 'read',
      input: z.object({}),
      async run(_args, ctx) {
        const user = (await readJson(await ctx.fetch('/user'))) as Record<string, unknown>;
        return { login: user.login, name: user.name, email: user.email, html_url: user.html_url };
      },
    }),
    defineTool({
      name: 'list_repos',
      description:
        "List the authenticated user's GitHub repositories as slim rows (full_name, private, description, default_branch, updated_at), most recently updated first. perPage defaults to 30 (max 100). Use get_repo for one repository's details.",
      access: 'read',
      input: z.object({
        perPage: z.number().int().min(1).max(100).default(30),
        page: z.number().int().min(1).default(1),
      }),
      async run(args, ctx) {
        const res = await ctx.fetch(`/user/repos?sort=updated&per_page=${args.perPage}&page=${args.page}`);
        const repos = (await readJson(res)) as Record<string, unknown>[];
        return repos.map((r) => ({
          full_name: r.full_name,
          private: r.private,
          description: r.description,
          default_branch: r.default_branch,
          updated_at: r.updated_at,
        }));
      },
    }),
  ],
  {
    async identify(ctx) {
      const user = (await readJson(await ctx.fetch('/user'))) as { id: number; login: string };
      return { externalId: String(user.id), label: user.login };
    },
  },
);
