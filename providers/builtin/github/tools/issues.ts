import { z } from 'zod';
import { defineTool } from '../../../sdk/index.js';
import { githubRequest, listInRepo, numberedPath, repoPath } from '../api.js';
import { issueNumber, paging, repoRef } from '../args.js';
import { type GhIssue, type GhUser, issueDetails, slimIssue } from '../shapes.js';

const issuePath = (a: { owner: string; repo: string; issueNumber: number }) => numberedPath(a.owner, a.repo, 'issues', a.issueNumber);

export const issueTools = [
  defineTool({
    name: 'list_issues',
    description:
      'List issues of a GitHub repository as slim rows {number, title, state, user, labels, comments, is_pull_request, html_url, updated_at}. GitHub counts pull requests as issues: rows with is_pull_request true are pull requests (list_pull_requests gives their branches). state defaults to "open"; labels is a comma-separated list that must all match; sorted by creation time, newest first, unless sort/direction say otherwise. perPage defaults to 30 (max 100). Call get_issue for the body.',
    access: 'read',
    scopes: ['repo'],
    input: z.object({
      ...repoRef,
      state: z.enum(['open', 'closed', 'all']).default('open').describe('Issue state to list'),
      labels: z.string().optional().describe('Comma-separated label names, e.g. "bug,ui"; issues must have all of them'),
      assignee: z.string().optional().describe('Login of the assignee, "none" for unassigned, "*" for any'),
      creator: z.string().optional().describe('Login of the user who opened the issue'),
      since: z.string().optional().describe('Only issues updated at or after this ISO 8601 timestamp'),
      sort: z.enum(['created', 'updated', 'comments']).default('created').describe('Sort field'),
      direction: z.enum(['asc', 'desc']).default('desc').describe('Sort direction'),
      ...paging,
    }),
    async run(args, ctx) {
      return listInRepo(ctx, 'issues', args, slimIssue);
    },
  }),
  defineTool({
    name: 'get_issue',
    description:
      'Get one GitHub issue (or pull request, by its number) with its body: number, title, state, state_reason, user, labels, assignees, comments count, is_pull_request, html_url and timestamps. For a pull request, get_pull_request adds branches and merge status.',
    access: 'read',
    scopes: ['repo'],
    input: z.object({ ...repoRef, issueNumber }),
    async run(args, ctx) {
      return issueDetails(await githubRequest<GhIssue>(ctx, 'GET', issuePath(args)));
    },
  }),
  defineTool({
    name: 'create_issue',
    description:
      'Open a new issue in a GitHub repository with a title and optional Markdown body, labels and assignees (logins). Labels that do not exist yet are created by GitHub. Returns the created issue (number, html_url, state, labels, ...); use its number with update_issue or comment_on_issue.',
    access: 'write',
    scopes: ['repo'],
    input: z.object({
      ...repoRef,
      title: z.string().min(1).describe('Issue title'),
      body: z.string().optional().describe('Issue body in GitHub-flavoured Markdown'),
      labels: z.array(z.string()).optional().describe('Label names to apply, e.g. ["bug"]'),
      assignees: z.array(z.string()).optional().describe('Logins to assign'),
    }),
    async run(args, ctx) {
      const { owner, repo, ...fields } = args;
      return issueDetails(await githubRequest<GhIssue>(ctx, 'POST', `${repoPath(owner, repo)}/issues`, fields));
    },
  }),
  defineTool({
    name: 'update_issue',
    description:
      'Edit a GitHub issue or pull request: change title, body, state ("closed" closes it, "open" reopens it, with an optional state_reason), or replace its labels or assignees (the lists you pass replace the current ones). Only the fields you pass change. Returns the updated issue.',
    access: 'write',
    scopes: ['repo'],
    input: z.object({
      ...repoRef,
      issueNumber,
      title: z.string().min(1).optional().describe('New title'),
      body: z.string().optional().describe('New body in Markdown (replaces the old body)'),
      state: z.enum(['open', 'closed']).optional().describe('"closed" to close, "open" to reopen'),
      stateReason: z.enum(['completed', 'not_planned', 'reopened']).optional().describe('Why the state changed'),
      labels: z.array(z.string()).optional().describe('Replaces all labels; [] removes them all'),
      assignees: z.array(z.string()).optional().describe('Replaces all assignees; [] unassigns everyone'),
    }),
    async run(args, ctx) {
      const { owner, repo, issueNumber: n, stateReason, ...fields } = args;
      const body = { ...fields, ...(stateReason ? { state_reason: stateReason } : {}) };
      return issueDetails(await githubRequest<GhIssue>(ctx, 'PATCH', issuePath({ owner, repo, issueNumber: n }), body));
    },
  }),
  defineTool({
    name: 'comment_on_issue',
    description:
      'Add a Markdown comment to a GitHub issue or pull request (pull request conversation comments use the PR number). Returns {id, html_url, user, created_at} of the new comment.',
    access: 'write',
    scopes: ['repo'],
    input: z.object({ ...repoRef, issueNumber, body: z.string().min(1).describe('Comment text in GitHub-flavoured Markdown') }),
    async run(args, ctx) {
      const comment = await githubRequest<{ id: number; html_url: string; user: GhUser | null; created_at: string }>(
        ctx,
        'POST',
        `${issuePath(args)}/comments`,
        { body: args.body },
      );
      return { id: comment.id, html_url: comment.html_url, user: comment.user?.login ?? null, created_at: comment.created_at };
    },
  }),
];
