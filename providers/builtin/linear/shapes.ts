/** The parts of Linear's GraphQL objects the tools select, and the slim rows they return. */

interface LinearPageInfo {
  hasNextPage: boolean;
  endCursor: string | null;
}

export interface LinearConnection<T> {
  nodes: T[];
  pageInfo: LinearPageInfo;
}

export interface LinearIssue {
  id: string;
  identifier: string;
  title: string;
  description?: string | null;
  priority: number;
  priorityLabel: string;
  url: string;
  dueDate?: string | null;
  createdAt: string;
  updatedAt: string;
  state: { id: string; name: string; type: string } | null;
  assignee: { id: string; name: string; email: string } | null;
  team: { id: string; key: string; name: string };
  labels: { nodes: { id: string; name: string }[] };
}

export interface LinearTeam {
  id: string;
  key: string;
  name: string;
  description: string | null;
  states: { nodes: { id: string; name: string; type: string; position: number }[] };
  labels: { nodes: { id: string; name: string }[] };
}

/** The selection of an issue row; `description` only where the caller asked for details. */
export const ISSUE_FIELDS = `id identifier title priority priorityLabel url dueDate createdAt updatedAt
  state { id name type } assignee { id name email } team { id key name } labels { nodes { id name } }`;

export const ISSUE_DETAIL_FIELDS = `${ISSUE_FIELDS} description`;

export const PAGE_INFO = 'pageInfo { hasNextPage endCursor }';

export const slimIssue = (i: LinearIssue) => ({
  id: i.id,
  identifier: i.identifier,
  title: i.title,
  state: i.state?.name ?? null,
  stateType: i.state?.type ?? null,
  priority: i.priority,
  priorityLabel: i.priorityLabel,
  assignee: i.assignee ? { id: i.assignee.id, name: i.assignee.name, email: i.assignee.email } : null,
  team: i.team.key,
  labels: i.labels.nodes.map((l) => l.name),
  url: i.url,
  updatedAt: i.updatedAt,
});

export const issueDetails = (i: LinearIssue) => ({
  ...slimIssue(i),
  description: i.description ?? null,
  teamId: i.team.id,
  stateId: i.state?.id ?? null,
  labelIds: i.labels.nodes.map((l) => l.id),
  dueDate: i.dueDate ?? null,
  createdAt: i.createdAt,
});

export const nextCursor = (page: LinearPageInfo) => (page.hasNextPage ? page.endCursor : null);
