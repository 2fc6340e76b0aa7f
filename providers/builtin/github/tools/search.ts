import { z } from 'zod';
import { defineTool } from '../../../sdk/index.js';
import { githubRequest, queryString } from '../api.js';
import { paging } from '../args.js';
import { type GhIssue, slimIssue } from '../shapes.js';

interface SearchResult<T> {
  total_count: number;
  incomplete_results: boolean;
  items: T[];
}

interface GhCodeHit {
  name: string;
  path: string;
  sha: string;
  html_url: string;
  repository: { full_name: string };
}

/** `owner/repo` from an issue's `repository_url` (`.../repos/owner/repo`). */
const repoFromUrl = (url: string | undefined) => (url ? (url.split('/repos/')[1] ?? null) : null);

export const searchTools = [
  defineTool({
    name: 'search_code',
    description:
      'Search code across GitHub with GitHub code-search syntax, e.g. "useState repo:facebook/react" or "TODO language:go org:acme path:src". Searches the default branch only. Returns {total_count, incomplete_results, items:[{repository, path, name, sha, html_url}]}; read a hit with get_file_contents. perPage defaults to 30 (max 100).',
    access: 'read',
    scopes: ['repo'],
    input: z.object({
      query: z.string().min(1).describe('Search terms plus qualifiers such as repo:, org:, user:, language:, path:, extension:'),
      ...paging,
    }),
    async run(args, ctx) {
      const result = await githubRequest<SearchResult<GhCodeHit>>(
        ctx,
        'GET',
        `/search/code${queryString({ q: args.query, per_page: args.perPage, page: args.page })}`,
      );
      return {
        total_count: result.total_count,
        incomplete_results: result.incomplete_results,
        items: result.items.map((i) => ({
          repository: i.repository.full_name,
          path: i.path,
          name: i.name,
          sha: i.sha,
          html_url: i.html_url,
        })),
      };
    },
  }),
  defineTool({
    name: 'search_issues',
    description:
      'Search GitHub issues and pull requests across repositories with GitHub search syntax, e.g. "repo:octocat/hello-world is:issue is:open label:bug crash", "author:octocat is:pr is:merged" or "is:pr is:open review-requested:@me" (also assignee:, mentions:, involves:). Include is:issue or is:pr to pick one kind. Returns {total_count, incomplete_results, items:[{repository, number, title, state, user, labels, comments, is_pull_request, html_url, updated_at}]}, best match first unless sort is set. perPage defaults to 30 (max 100).',
    access: 'read',
    scopes: ['repo'],
    input: z.object({
      query: z.string().min(1).describe('Search terms plus qualifiers such as repo:, is:issue, is:pr, is:open, label:, author:, assignee:'),
      sort: z.enum(['comments', 'reactions', 'created', 'updated']).optional().describe('Sort field (default: best match)'),
      order: z.enum(['asc', 'desc']).default('desc').describe('Sort order when sort is set'),
      ...paging,
    }),
    async run(args, ctx) {
      const query = queryString({
        q: args.query,
        sort: args.sort,
        order: args.sort ? args.order : undefined,
        per_page: args.perPage,
        page: args.page,
      });
      const result = await githubRequest<SearchResult<GhIssue>>(ctx, 'GET', `/search/issues${query}`);
      return {
        total_count: result.total_count,
        incomplete_results: result.incomplete_results,
        items: result.items.map((i) => ({ repository: repoFromUrl(i.repository_url), ...slimIssue(i) })),
      };
    },
  }),
];
