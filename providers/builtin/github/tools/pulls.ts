import { z } from 'zod';
import { defineTool } from '../../../sdk/index.js';
import { githubRequest, listInRepo, numberedPath, repoPath } from '../api.js';
import { issueNumber, paging, repoRef } from '../args.js';
import { type GhPull, pullDetails, slimPull } from '../shapes.js';

const pullPath = (a: { owner: string; repo: string; pullNumber: number }) => numberedPath(a.owner, a.repo, 'pulls', a.pullNumber);
const pullNumber = issueNumber.describe('Pull request number, e.g. 42');

export const pullTools = [
  defineTool({
    name: 'list_pull_requests',
    description:
      'List pull requests (PRs) of a GitHub repository as slim rows {number, title, state, draft, user, head, base, html_url, updated_at}. state defaults to "open"; head filters by "user:branch", base by target branch name. Sorted by creation time, newest first, unless sort/direction say otherwise. perPage defaults to 30 (max 100). Call get_pull_request for body and merge status.',
    access: 'read',
    scopes: ['repo'],
    input: z.object({
      ...repoRef,
      state: z.enum(['open', 'closed', 'all']).default('open').describe('Pull request state to list'),
      head: z.string().optional().describe('Filter by head as "user:branch", e.g. "octocat:feature"'),
      base: z.string().optional().describe('Filter by base (target) branch name, e.g. "main"'),
      sort: z.enum(['created', 'updated', 'popularity', 'long-running']).default('created').describe('Sort field'),
      direction: z.enum(['asc', 'desc']).default('desc').describe('Sort direction'),
      ...paging,
    }),
    async run(args, ctx) {
      return listInRepo(ctx, 'pulls', args, slimPull);
    },
  }),
  defineTool({
    name: 'get_pull_request',
    description:
      'Get one GitHub pull request: title, body, state, draft, head and base branches, head_sha, merged, mergeable (null while GitHub is still computing it; retry shortly), mergeable_state, commit/addition/deletion/changed-file counts and timestamps. Pass head_sha to merge_pull_request to merge exactly what you reviewed.',
    access: 'read',
    scopes: ['repo'],
    input: z.object({ ...repoRef, pullNumber }),
    async run(args, ctx) {
      return pullDetails(await githubRequest<GhPull>(ctx, 'GET', pullPath(args)));
    },
  }),
  defineTool({
    name: 'create_pull_request',
    description:
      'Open a GitHub pull request merging head into base. head is a branch of this repository (or "user:branch" for a fork) that must already exist and hold commits that base lacks (create_or_update_file can commit to an existing branch); base is the target branch, usually the default_branch from get_repo. Returns the new pull request (number, html_url, head, base, mergeable, ...).',
    access: 'write',
    scopes: ['repo'],
    input: z.object({
      ...repoRef,
      title: z.string().min(1).describe('Pull request title'),
      head: z.string().min(1).describe('Branch with the changes, or "user:branch" for a fork'),
      base: z.string().min(1).describe('Branch to merge into, e.g. "main"'),
      body: z.string().optional().describe('Description in GitHub-flavoured Markdown'),
      draft: z.boolean().default(false).describe('Open as a draft pull request'),
    }),
    async run(args, ctx) {
      const { owner, repo, ...fields } = args;
      return pullDetails(await githubRequest<GhPull>(ctx, 'POST', `${repoPath(owner, repo)}/pulls`, fields));
    },
  }),
  defineTool({
    name: 'merge_pull_request',
    description:
      'Merge an open GitHub pull request into its base branch; this changes the base branch and cannot be undone from here. mergeMethod is "merge" (default), "squash" or "rebase". Pass sha (head_sha from get_pull_request) so the merge fails with HTTP 409 if the branch moved since you looked. Fails with HTTP 405 when the pull request is not mergeable. Returns {merged, sha, message}.',
    access: 'destructive',
    scopes: ['repo'],
    input: z.object({
      ...repoRef,
      pullNumber,
      mergeMethod: z.enum(['merge', 'squash', 'rebase']).default('merge').describe('How to merge'),
      sha: z.string().optional().describe('Expected head commit SHA; the merge is refused if the head differs'),
      commitTitle: z.string().optional().describe('Title of the merge or squash commit'),
      commitMessage: z.string().optional().describe('Extra detail for the merge or squash commit message'),
    }),
    async run(args, ctx) {
      const result = await githubRequest<{ sha: string; merged: boolean; message: string }>(ctx, 'PUT', `${pullPath(args)}/merge`, {
        merge_method: args.mergeMethod,
        sha: args.sha,
        commit_title: args.commitTitle,
        commit_message: args.commitMessage,
      });
      return { merged: result.merged, sha: result.sha, message: result.message };
    },
  }),
];
