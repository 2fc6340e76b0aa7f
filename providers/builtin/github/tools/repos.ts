import { z } from 'zod';
import { defineTool } from '../../../sdk/index.js';
import { githubRequest, listInRepo, queryString, repoPath } from '../api.js';
import { paging, repoRef } from '../args.js';
import { type GhRepo, repoDetails, slimCommit, slimRepo } from '../shapes.js';

export const repoTools = [
  defineTool({
    name: 'list_repos',
    description:
      "List the authenticated user's GitHub repositories as slim rows (full_name, private, description, default_branch, updated_at), most recently updated first. perPage defaults to 30 (max 100). Use get_repo for one repository's details.",
    access: 'read',
    scopes: ['repo'],
    input: z.object(paging),
    async run(args, ctx) {
      const repos = await githubRequest<GhRepo[]>(
        ctx,
        'GET',
        `/user/repos${queryString({ sort: 'updated', per_page: args.perPage, page: args.page })}`,
      );
      return repos.map(slimRepo);
    },
  }),
  defineTool({
    name: 'get_repo',
    description:
      'Get one GitHub repository: full_name, private, visibility, description, default_branch, html_url, language, topics, star/fork/open-issue counts, archived, updated_at and pushed_at. Use default_branch as the ref for get_file_contents, list_commits or create_pull_request.',
    access: 'read',
    scopes: ['repo'],
    input: z.object(repoRef),
    async run(args, ctx) {
      return repoDetails(await githubRequest<GhRepo>(ctx, 'GET', repoPath(args.owner, args.repo)));
    },
  }),
  defineTool({
    name: 'list_branches',
    description:
      'List the branches of a GitHub repository as {name, sha, protected} rows (sha is the head commit). perPage defaults to 30 (max 100); set protectedOnly to list only protected branches. Use a branch name as head/base in create_pull_request or as ref in get_file_contents.',
    access: 'read',
    scopes: ['repo'],
    input: z.object({
      ...repoRef,
      protectedOnly: z.boolean().optional().describe('Only protected branches when true'),
      ...paging,
    }),
    async run(args, ctx) {
      const query = queryString({ protected: args.protectedOnly, per_page: args.perPage, page: args.page });
      const branches = await githubRequest<{ name: string; commit: { sha: string }; protected: boolean }[]>(
        ctx,
        'GET',
        `${repoPath(args.owner, args.repo)}/branches${query}`,
      );
      return branches.map((b) => ({ name: b.name, sha: b.commit.sha, protected: b.protected }));
    },
  }),
  defineTool({
    name: 'list_commits',
    description:
      'List commits of a GitHub repository, newest first, as {sha, message, author, date, html_url} rows. Starts from the default branch unless sha names a branch, tag or commit; path limits it to commits touching that file; author filters by login or email; since/until are ISO 8601 timestamps. perPage defaults to 30 (max 100).',
    access: 'read',
    scopes: ['repo'],
    input: z.object({
      ...repoRef,
      sha: z.string().optional().describe('Branch, tag or commit SHA to start listing from (default: the default branch)'),
      path: z.string().optional().describe('Only commits touching this file path'),
      author: z.string().optional().describe('GitHub login or email address of the commit author'),
      since: z.string().optional().describe('Only commits after this ISO 8601 timestamp, e.g. 2026-01-01T00:00:00Z'),
      until: z.string().optional().describe('Only commits before this ISO 8601 timestamp'),
      ...paging,
    }),
    async run(args, ctx) {
      return listInRepo(ctx, 'commits', args, slimCommit);
    },
  }),
];
