import { z } from 'zod';
import { defineTool } from '../../../sdk/index.js';
import { textToAdf } from '../adf.js';
import { cloudIdArg, issueKeyArg, issuePath, jiraRequest } from '../api.js';
import { DETAIL_FIELDS, issueDetails, type JiraIssue, SEARCH_FIELDS, slimIssue } from '../shapes.js';

export const issueTools = [
  defineTool({
    name: 'search_issues',
    description:
      'Search or list Jira issues with JQL (Jira lists issues by searching: by project, status, assignee or unassigned, reporter, priority, labels, created/updated dates or text), e.g. \'project = PROJ AND status = "In Progress" ORDER BY updated DESC\' or "assignee = currentUser() AND statusCategory != Done". The JQL must restrict the search (a bare ORDER BY is refused). Returns {issues:[{key, id, summary, status, issueType, priority, assignee, updated}], nextPageToken, isLast}; pass nextPageToken back to get the next page. maxResults defaults to 50 (max 100). Call get_issue for description and comments.',
    access: 'read',
    scopes: ['read:jira-work'],
    input: z.object({
      cloudId: cloudIdArg,
      jql: z.string().min(1).describe('JQL query with at least one search restriction'),
      maxResults: z.number().int().min(1).max(100).default(50).describe('Issues per page (Jira default 50)'),
      nextPageToken: z.string().optional().describe('Token from the previous page to fetch the next one'),
    }),
    async run(args, ctx) {
      const result = await jiraRequest<{ issues: JiraIssue[]; nextPageToken?: string; isLast?: boolean }>(
        ctx,
        args.cloudId,
        'POST',
        '/search/jql',
        { jql: args.jql, maxResults: args.maxResults, fields: SEARCH_FIELDS, nextPageToken: args.nextPageToken },
      );
      return {
        issues: result.issues.map(slimIssue),
        nextPageToken: result.nextPageToken ?? null,
        isLast: result.isLast ?? result.nextPageToken === undefined,
      };
    },
  }),
  defineTool({
    name: 'get_issue',
    description:
      'Get one Jira issue by key: summary, status and status category, issue type, priority, assignee and reporter ({accountId, displayName}), labels, project, parent, description as plain text, created/updated, and the newest 20 comments as text with commentCount. Use list_transitions to move it and assign_issue with an accountId to reassign it.',
    access: 'read',
    scopes: ['read:jira-work'],
    input: z.object({ cloudId: cloudIdArg, issueKey: issueKeyArg }),
    async run(args, ctx) {
      const query = `?fields=${DETAIL_FIELDS.join(',')}`;
      return issueDetails(await jiraRequest<JiraIssue>(ctx, args.cloudId, 'GET', `${issuePath(args.issueKey)}${query}`));
    },
  }),
  defineTool({
    name: 'create_issue',
    description:
      'Create a Jira issue in a project (projectKey from list_projects) with a summary and an optional plain-text description (converted to Atlassian Document Format; blank lines separate paragraphs). issueType defaults to "Task" and must be one of the project\'s issue types listed by list_projects; parentKey makes a sub-task or child issue. Returns {id, key}; follow up with get_issue, add_comment or transition_issue.',
    access: 'write',
    scopes: ['write:jira-work'],
    input: z.object({
      cloudId: cloudIdArg,
      projectKey: z.string().min(1).describe('Project key, e.g. "PROJ"'),
      summary: z.string().min(1).max(255).describe('One-line summary (title)'),
      description: z.string().optional().describe('Plain-text description'),
      issueType: z.string().default('Task').describe('Issue type name, e.g. "Task", "Bug", "Story"'),
      labels: z.array(z.string()).optional().describe('Labels (no spaces), e.g. ["backend"]'),
      priority: z.string().optional().describe('Priority name, e.g. "High"'),
      assigneeAccountId: z.string().optional().describe('accountId of the assignee'),
      parentKey: z.string().optional().describe('Key of the parent issue, for a sub-task or child issue'),
    }),
    async run(args, ctx) {
      const fields: Record<string, unknown> = {
        project: { key: args.projectKey },
        summary: args.summary,
        issuetype: { name: args.issueType },
      };
      if (args.description !== undefined) fields.description = textToAdf(args.description);
      if (args.labels) fields.labels = args.labels;
      if (args.priority) fields.priority = { name: args.priority };
      if (args.assigneeAccountId) fields.assignee = { accountId: args.assigneeAccountId };
      if (args.parentKey) fields.parent = { key: args.parentKey };
      const created = await jiraRequest<{ id: string; key: string }>(ctx, args.cloudId, 'POST', '/issue', { fields });
      return { id: created.id, key: created.key };
    },
  }),
  defineTool({
    name: 'update_issue',
    description:
      'Edit fields of a Jira issue: summary, description (plain text, replaces the old one), labels (replace the current list) or priority. Only the fields you pass change; to change status use transition_issue, to change the assignee use assign_issue. Returns {key, updated:[field names]}.',
    access: 'write',
    scopes: ['write:jira-work'],
    input: z
      .object({
        cloudId: cloudIdArg,
        issueKey: issueKeyArg,
        summary: z.string().min(1).max(255).optional().describe('New summary'),
        description: z.string().optional().describe('New plain-text description'),
        labels: z.array(z.string()).optional().describe('Replaces all labels; [] removes them'),
        priority: z.string().optional().describe('Priority name, e.g. "High"'),
      })
      .refine((a) => a.summary !== undefined || a.description !== undefined || a.labels !== undefined || a.priority !== undefined, {
        message: 'Pass at least one of summary, description, labels, priority',
      }),
    async run(args, ctx) {
      const fields: Record<string, unknown> = {};
      if (args.summary !== undefined) fields.summary = args.summary;
      if (args.description !== undefined) fields.description = textToAdf(args.description);
      if (args.labels !== undefined) fields.labels = args.labels;
      if (args.priority !== undefined) fields.priority = { name: args.priority };
      await jiraRequest(ctx, args.cloudId, 'PUT', issuePath(args.issueKey), { fields });
      return { key: args.issueKey, updated: Object.keys(fields) };
    },
  }),
];
