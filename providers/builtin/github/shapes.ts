/** The parts of GitHub's REST objects the tools read, and the slim rows they return. */

export interface GhUser {
  login: string;
  id: number;
  html_url?: string;
}

export interface GhRepo {
  full_name: string;
  private: boolean;
  description: string | null;
  default_branch: string;
  html_url: string;
  language?: string | null;
  topics?: string[];
  stargazers_count?: number;
  forks_count?: number;
  open_issues_count?: number;
  archived?: boolean;
  visibility?: string;
  updated_at: string;
  pushed_at?: string | null;
}

export interface GhIssue {
  number: number;
  title: string;
  state: string;
  state_reason?: string | null;
  body?: string | null;
  user: GhUser | null;
  labels: ({ name?: string } | string)[];
  assignees?: GhUser[] | null;
  comments: number;
  html_url: string;
  repository_url?: string;
  pull_request?: unknown;
  created_at: string;
  updated_at: string;
  closed_at?: string | null;
}

export interface GhPull {
  number: number;
  title: string;
  state: string;
  draft?: boolean;
  body?: string | null;
  user: GhUser | null;
  head: { ref: string; sha: string };
  base: { ref: string };
  html_url: string;
  merged?: boolean;
  mergeable?: boolean | null;
  mergeable_state?: string;
  merged_at?: string | null;
  commits?: number;
  additions?: number;
  deletions?: number;
  changed_files?: number;
  created_at: string;
  updated_at: string;
}

interface GhCommit {
  sha: string;
  html_url: string;
  commit: { message: string; author: { name: string; email: string; date: string } | null };
  author: GhUser | null;
}

const labelNames = (labels: GhIssue['labels']) =>
  labels.map((l) => (typeof l === 'string' ? l : l.name)).filter((n): n is string => typeof n === 'string');

export const slimRepo = (r: GhRepo) => ({
  full_name: r.full_name,
  private: r.private,
  description: r.description,
  default_branch: r.default_branch,
  updated_at: r.updated_at,
});

export const repoDetails = (r: GhRepo) => ({
  ...slimRepo(r),
  html_url: r.html_url,
  visibility: r.visibility ?? (r.private ? 'private' : 'public'),
  archived: r.archived ?? false,
  language: r.language ?? null,
  topics: r.topics ?? [],
  stargazers_count: r.stargazers_count ?? 0,
  forks_count: r.forks_count ?? 0,
  open_issues_count: r.open_issues_count ?? 0,
  pushed_at: r.pushed_at ?? null,
});

/** An issue row; GitHub's issue endpoints also return pull requests, flagged here. */
export const slimIssue = (i: GhIssue) => ({
  number: i.number,
  title: i.title,
  state: i.state,
  user: i.user?.login ?? null,
  labels: labelNames(i.labels),
  comments: i.comments,
  is_pull_request: i.pull_request !== undefined,
  html_url: i.html_url,
  updated_at: i.updated_at,
});

export const issueDetails = (i: GhIssue) => ({
  ...slimIssue(i),
  body: i.body ?? null,
  state_reason: i.state_reason ?? null,
  assignees: (i.assignees ?? []).map((a) => a.login),
  created_at: i.created_at,
  closed_at: i.closed_at ?? null,
});

export const slimPull = (p: GhPull) => ({
  number: p.number,
  title: p.title,
  state: p.state,
  draft: p.draft ?? false,
  user: p.user?.login ?? null,
  head: p.head.ref,
  base: p.base.ref,
  html_url: p.html_url,
  updated_at: p.updated_at,
});

export const pullDetails = (p: GhPull) => ({
  ...slimPull(p),
  body: p.body ?? null,
  head_sha: p.head.sha,
  merged: p.merged ?? false,
  mergeable: p.mergeable ?? null,
  mergeable_state: p.mergeable_state ?? null,
  merged_at: p.merged_at ?? null,
  commits: p.commits ?? null,
  additions: p.additions ?? null,
  deletions: p.deletions ?? null,
  changed_files: p.changed_files ?? null,
  created_at: p.created_at,
});

export const slimCommit = (c: GhCommit) => ({
  sha: c.sha,
  message: c.commit.message,
  author: c.author?.login ?? c.commit.author?.name ?? null,
  date: c.commit.author?.date ?? null,
  html_url: c.html_url,
});
