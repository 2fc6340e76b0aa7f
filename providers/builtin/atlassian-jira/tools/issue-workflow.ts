import { z } from 'zod';
import { ProviderHttpError } from '../../../sdk/http.js';
import type { ToolContext } from '../../../sdk/index.js';
import { defineTool } from '../../../sdk/index.js';
import { textToAdf } from '../adf.js';
import { cloudIdArg, issueKeyArg, issuePath, jiraRequest, resolveCloudId } from '../api.js';
import type { JiraUser } from '../shapes.js';

interface JiraTransition {
  id: string;
  name: string;
  to: { id: string; name: string; statusCategory?: { key: string; name: string } };
}

async function transitionsOf(ctx: ToolContext, cloudId: string, issueKey: string) {
  const result = await jiraRequest<{ transitions: JiraTransition[] }>(ctx, cloudId, 'GET', `${issuePath(issueKey)}/transitions`);
  return result.transitions.map((t) => ({ id: t.id, name: t.name, toStatus: t.to.name, toCategory: t.to.statusCategory?.name ?? null }));
}

export const workflowTools = [
  defineTool({
    name: 'list_transitions',
    description:
      'List the workflow transitions available on a Jira issue right now (the statuses it can move to next), for the connection\'s user: {transitions:[{id, name, toStatus, toCategory}]}. Pass an id (or the name) to transition_issue to move the issue, e.g. to "Done".',
    access: 'read',
    scopes: ['read:jira-work'],
    input: z.object({ cloudId: cloudIdArg, issueKey: issueKeyArg }),
    async run(args, ctx) {
      const cloudId = await resolveCloudId(ctx, args.cloudId);
      return { transitions: await transitionsOf(ctx, cloudId, args.issueKey) };
    },
  }),
  defineTool({
    name: 'transition_issue',
    description:
      'Move a Jira issue through its workflow (change its status, e.g. to In Progress or Done). transition is a transition id from list_transitions, or its name or target status name (case-insensitive, looked up for you), e.g. "Done". An optional plain-text comment is added with the transition. Returns {key, transitionId, toStatus}. Fails with HTTP 400 when the transition is not available from the current status.',
    access: 'write',
    scopes: ['write:jira-work'],
    input: z.object({
      cloudId: cloudIdArg,
      issueKey: issueKeyArg,
      transition: z.string().min(1).describe('Transition id (e.g. "31"), or transition/status name (e.g. "Done")'),
      comment: z.string().optional().describe('Plain-text comment to add with the transition'),
    }),
    async run(args, ctx) {
      const cloudId = await resolveCloudId(ctx, args.cloudId);
      const available = await transitionsOf(ctx, cloudId, args.issueKey);
      const wanted = args.transition.toLowerCase();
      const match =
        available.find((t) => t.id === args.transition) ??
        available.find((t) => t.name.toLowerCase() === wanted) ??
        available.find((t) => t.toStatus.toLowerCase() === wanted);
      if (!match) {
        const names = available.map((t) => `${t.id} "${t.name}"`).join(', ');
        throw new ProviderHttpError(400, `No transition "${args.transition}" on ${args.issueKey}; available: ${names || 'none'}`);
      }
      const body: Record<string, unknown> = { transition: { id: match.id } };
      if (args.comment) body.update = { comment: [{ add: { body: textToAdf(args.comment) } }] };
      await jiraRequest(ctx, cloudId, 'POST', `${issuePath(args.issueKey)}/transitions`, body);
      return { key: args.issueKey, transitionId: match.id, toStatus: match.toStatus };
    },
  }),
  defineTool({
    name: 'assign_issue',
    description:
      "Assign a Jira issue. accountId is the assignee's Atlassian accountId (as in get_issue's assignee/reporter), \"me\" for the connection's own user, or null to unassign. Returns {key, assignee:{accountId, displayName}|null}.",
    access: 'write',
    scopes: ['write:jira-work', 'read:jira-user'],
    input: z.object({
      cloudId: cloudIdArg,
      issueKey: issueKeyArg,
      accountId: z.string().min(1).nullable().describe('Atlassian accountId, "me", or null to unassign'),
    }),
    async run(args, ctx) {
      const cloudId = await resolveCloudId(ctx, args.cloudId);
      let assignee: { accountId: string; displayName: string | null } | null = null;
      if (args.accountId === 'me') {
        const me = await jiraRequest<JiraUser>(ctx, cloudId, 'GET', '/myself');
        assignee = { accountId: me.accountId, displayName: me.displayName };
      } else if (args.accountId !== null) {
        assignee = { accountId: args.accountId, displayName: null };
      }
      await jiraRequest(ctx, cloudId, 'PUT', `${issuePath(args.issueKey)}/assignee`, { accountId: assignee?.accountId ?? null });
      return { key: args.issueKey, assignee };
    },
  }),
];
