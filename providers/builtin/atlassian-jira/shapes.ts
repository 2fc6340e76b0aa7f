import { type AdfNode, adfToText } from './adf.js';

/** The parts of Jira's REST v3 issue objects the tools read, and the slim rows they return. */

export interface JiraUser {
  accountId: string;
  displayName: string;
  emailAddress?: string;
}

export interface JiraComment {
  id: string;
  author?: JiraUser;
  body?: AdfNode;
  created: string;
}

export interface JiraIssue {
  id: string;
  key: string;
  fields: {
    summary?: string;
    status?: { name: string; statusCategory?: { key: string; name: string } };
    issuetype?: { name: string };
    priority?: { name: string } | null;
    assignee?: JiraUser | null;
    reporter?: JiraUser | null;
    labels?: string[];
    project?: { key: string; name: string };
    parent?: { key: string } | null;
    description?: AdfNode | null;
    comment?: { comments: JiraComment[]; total: number };
    created?: string;
    updated?: string;
  };
}

/** Fields a search row needs; the enhanced search returns only ids unless fields are named. */
export const SEARCH_FIELDS = ['summary', 'status', 'issuetype', 'priority', 'assignee', 'updated'];
export const DETAIL_FIELDS = [...SEARCH_FIELDS, 'reporter', 'labels', 'project', 'parent', 'description', 'comment', 'created'];

const person = (u: JiraUser | null | undefined) => (u ? { accountId: u.accountId, displayName: u.displayName } : null);

export const slimIssue = (i: JiraIssue) => ({
  key: i.key,
  id: i.id,
  summary: i.fields.summary ?? null,
  status: i.fields.status?.name ?? null,
  issueType: i.fields.issuetype?.name ?? null,
  priority: i.fields.priority?.name ?? null,
  assignee: i.fields.assignee?.displayName ?? null,
  updated: i.fields.updated ?? null,
});

/** Comments kept by get_issue: the newest ones, as text. */
const COMMENTS_KEPT = 20;

export const issueDetails = (i: JiraIssue) => {
  const comments = i.fields.comment?.comments ?? [];
  return {
    ...slimIssue(i),
    statusCategory: i.fields.status?.statusCategory?.name ?? null,
    assignee: person(i.fields.assignee),
    reporter: person(i.fields.reporter),
    labels: i.fields.labels ?? [],
    project: i.fields.project ? { key: i.fields.project.key, name: i.fields.project.name } : null,
    parent: i.fields.parent?.key ?? null,
    description: adfToText(i.fields.description),
    created: i.fields.created ?? null,
    commentCount: i.fields.comment?.total ?? comments.length,
    comments: comments.slice(-COMMENTS_KEPT).map((c) => ({
      id: c.id,
      author: c.author?.displayName ?? null,
      created: c.created,
      body: adfToText(c.body),
    })),
  };
};
