import { z } from 'zod';
import { defineTool } from '../../../sdk/index.js';
import { linearGraphql } from '../api.js';
import {
  ISSUE_DETAIL_FIELDS,
  ISSUE_FIELDS,
  issueDetails,
  type LinearConnection,
  type LinearIssue,
  nextCursor,
  PAGE_INFO,
  slimIssue,
} from '../shapes.js';

const STATE_TYPES = ['triage', 'backlog', 'unstarted', 'started', 'completed', 'canceled'] as const;

const paging = {
  first: z.number().int().min(1).max(100).default(25).describe('Issues per page (default 25, max 100)'),
  after: z.string().min(1).optional().describe('nextCursor of the previous page'),
};

const priority = z.number().int().min(0).max(4).describe('Priority: 0 none, 1 urgent, 2 high, 3 medium, 4 low');

const LIST_ISSUES = `query Issues($first: Int, $after: String, $filter: IssueFilter, $orderBy: PaginationOrderBy, $includeArchived: Boolean) {
  issues(first: $first, after: $after, filter: $filter, orderBy: $orderBy, includeArchived: $includeArchived) {
    nodes { ${ISSUE_FIELDS} }
    ${PAGE_INFO}
  }
}`;

const SEARCH_ISSUES = `query SearchIssues($term: String!, $first: Int, $after: String, $teamId: String, $includeComments: Boolean) {
  searchIssues(term: $term, first: $first, after: $after, teamId: $teamId, includeComments: $includeComments) {
    nodes { ${ISSUE_FIELDS} }
    ${PAGE_INFO}
    totalCount
  }
}`;

const CREATE_ISSUE = `mutation IssueCreate($input: IssueCreateInput!) {
  issueCreate(input: $input) { success issue { ${ISSUE_DETAIL_FIELDS} } }
}`;

const UPDATE_ISSUE = `mutation IssueUpdate($id: String!, $input: IssueUpdateInput!) {
  issueUpdate(id: $id, input: $input) { success issue { ${ISSUE_DETAIL_FIELDS} } }
}`;

type IssuePayload = { success: boolean; issue: LinearIssue | null };

function payloadIssue(payload: IssuePayload, what: string) {
  if (!payload.success || !payload.issue) throw new Error(`Linear did not ${what} the issue`);
  return issueDetails(payload.issue);
}

export const issueTools = [
  defineTool({
    name: 'list_issues',
    description:
      'List Linear issues as slim rows {id, identifier (e.g. "ENG-123"), title, state, stateType, priority, priorityLabel, assignee, team, labels, url, updatedAt}, ' +
      'most recently updated first, with nextCursor (pass it as after; null on the last page). Filters combine: teamKey (from list_teams), ' +
      'stateType (triage, backlog, unstarted, started, completed, canceled), assignedToMe, assigneeEmail. first defaults to 25 (max 100). ' +
      'For free-text queries use search_issues; to change an issue call update_issue with its id or identifier.',
    access: 'read',
    scopes: [],
    input: z.object({
      teamKey: z.string().min(1).max(20).optional().describe('Team key from list_teams, e.g. "ENG"'),
      stateType: z.enum(STATE_TYPES).optional().describe('Only issues whose workflow state has this type'),
      assignedToMe: z.boolean().optional().describe('true: only issues assigned to the key owner'),
      assigneeEmail: z.string().email().optional().describe('Only issues assigned to the user with this email'),
      orderBy: z.enum(['updatedAt', 'createdAt']).default('updatedAt').describe('Sort field, newest first'),
      includeArchived: z.boolean().default(false).describe('Include archived issues'),
      ...paging,
    }),
    async run(args, ctx) {
      const filter: Record<string, unknown> = {};
      if (args.teamKey) filter.team = { key: { eq: args.teamKey } };
      if (args.stateType) filter.state = { type: { eq: args.stateType } };
      if (args.assignedToMe) filter.assignee = { isMe: { eq: true } };
      else if (args.assigneeEmail) filter.assignee = { email: { eq: args.assigneeEmail } };
      const { issues } = await linearGraphql<{ issues: LinearConnection<LinearIssue> }>(ctx, LIST_ISSUES, {
        first: args.first,
        after: args.after,
        filter: Object.keys(filter).length ? filter : undefined,
        orderBy: args.orderBy,
        includeArchived: args.includeArchived,
      });
      return { issues: issues.nodes.map(slimIssue), nextCursor: nextCursor(issues.pageInfo) };
    },
  }),
  defineTool({
    name: 'search_issues',
    description:
      'Full-text search of Linear issues by words in the title and description (and comments with includeComments), optionally in one team (teamId from list_teams). ' +
      'Answers {issues: [slim rows as list_issues], totalCount, nextCursor}. first defaults to 25 (max 100). ' +
      'Use list_issues to filter by state or assignee; update_issue takes an id or identifier from the rows.',
    access: 'read',
    scopes: [],
    input: z.object({
      query: z.string().min(1).max(500).describe('Words to search for, e.g. "login timeout"'),
      teamId: z.string().min(1).optional().describe('Only issues of this team (id from list_teams)'),
      includeComments: z.boolean().default(false).describe('Also match comment text'),
      ...paging,
    }),
    async run(args, ctx) {
      const { searchIssues } = await linearGraphql<{ searchIssues: LinearConnection<LinearIssue> & { totalCount: number } }>(
        ctx,
        SEARCH_ISSUES,
        { term: args.query, first: args.first, after: args.after, teamId: args.teamId, includeComments: args.includeComments },
      );
      return {
        issues: searchIssues.nodes.map(slimIssue),
        totalCount: searchIssues.totalCount,
        nextCursor: nextCursor(searchIssues.pageInfo),
      };
    },
  }),
  defineTool({
    name: 'create_issue',
    description:
      'Create a Linear issue in a team (teamId from list_teams) with a title and optional Markdown description, priority (0 none, 1 urgent, 2 high, 3 medium, 4 low), ' +
      'assigneeId, stateId and labelIds (from list_teams; without stateId the team default state is used) and dueDate (YYYY-MM-DD). ' +
      'Returns the created issue {id, identifier, title, state, url, description, ...}; use its identifier with update_issue.',
    access: 'write',
    scopes: [],
    input: z.object({
      teamId: z.string().min(1).describe('Team id from list_teams (not the key)'),
      title: z.string().min(1).max(255).describe('Issue title'),
      description: z.string().optional().describe('Issue description in Markdown'),
      priority: priority.optional(),
      assigneeId: z.string().min(1).optional().describe('User id to assign'),
      stateId: z.string().min(1).optional().describe('Workflow state id from list_teams'),
      labelIds: z.array(z.string().min(1)).optional().describe('Label ids from list_teams'),
      dueDate: z.iso.date().optional().describe('Due date, YYYY-MM-DD'),
    }),
    async run(args, ctx) {
      const { issueCreate } = await linearGraphql<{ issueCreate: IssuePayload }>(ctx, CREATE_ISSUE, { input: args });
      return payloadIssue(issueCreate, 'create');
    },
  }),
  defineTool({
    name: 'update_issue',
    description:
      'Change a Linear issue, by id or identifier (e.g. "ENG-123"): title, Markdown description, priority (0 none … 4 low), stateId to move it ' +
      '(e.g. to In Progress or Done; states from list_teams, a state of type completed closes it), assigneeId to assign it (null unassigns), ' +
      'labelIds (replaces all labels), dueDate (null clears it). ' +
      'Only the fields you pass change. Returns the updated issue.',
    access: 'write',
    scopes: [],
    input: z
      .object({
        id: z.string().min(1).describe('Issue id or identifier, e.g. "ENG-123"'),
        title: z.string().min(1).max(255).optional().describe('New title'),
        description: z.string().optional().describe('New description in Markdown (replaces the old one)'),
        priority: priority.optional(),
        stateId: z.string().min(1).optional().describe('Workflow state id from list_teams'),
        assigneeId: z.string().min(1).nullable().optional().describe('User id to assign; null unassigns'),
        labelIds: z.array(z.string().min(1)).optional().describe('Replaces all labels; [] removes them'),
        dueDate: z.iso.date().nullable().optional().describe('Due date YYYY-MM-DD; null clears it'),
      })
      .refine(({ id: _id, ...fields }) => Object.values(fields).some((v) => v !== undefined), {
        message: 'pass at least one field to change',
      }),
    async run(args, ctx) {
      const { id, ...input } = args;
      const { issueUpdate } = await linearGraphql<{ issueUpdate: IssuePayload }>(ctx, UPDATE_ISSUE, { id, input });
      return payloadIssue(issueUpdate, 'update');
    },
  }),
];
