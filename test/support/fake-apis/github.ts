import express, { type Request, type Response } from 'express';
import { gitSha, intParam, numericId, pageOf, tokenize } from './util.js';

/**
 * An in-memory GitHub speaking the REST API's shapes (https://docs.github.com/rest): repositories
 * with branches, commits and file trees, issues and pull requests sharing one number sequence,
 * comments, merges and search.
 */

interface Commit {
  sha: string;
  message: string;
  parents: string[];
  author: string;
  date: string;
  tree: Map<string, Buffer>;
}

export interface FakeIssue {
  number: number;
  title: string;
  body: string | null;
  state: 'open' | 'closed';
  stateReason: string | null;
  labels: string[];
  assignees: string[];
  user: string;
  comments: { id: number; body: string; user: string; created_at: string }[];
  createdAt: string;
  updatedAt: string;
  closedAt: string | null;
  pull?: { head: string; base: string; draft: boolean; mergedAt: string | null; mergeSha: string | null };
}

export interface FakeRepo {
  id: number;
  owner: string;
  name: string;
  private: boolean;
  description: string | null;
  defaultBranch: string;
  topics: string[];
  createdAt: string;
  updatedAt: string;
  branches: Map<string, string>;
  protectedBranches: Set<string>;
  commits: Map<string, Commit>;
  issues: FakeIssue[];
}

export interface FakeGithub {
  repos: Map<string, FakeRepo>;
  router: express.Router;
}

const DOCS = 'https://docs.github.com/rest';
const WEB = 'https://github.com';
const MAX_CONTENT_BYTES = 1024 * 1024;
const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
const fail = (res: Response, status: number, message: string, errors?: unknown[]) =>
  res.status(status).json({ message, ...(errors ? { errors } : {}), documentation_url: DOCS, status: String(status) });
const validation = (res: Response, resource: string, field: string, code = 'missing_field') =>
  fail(res, 422, 'Validation Failed', [{ resource, code, field }]);

let commentIds = 1_000_000;

export function createFakeGithub(apiUrl: string): FakeGithub {
  const repos = new Map<string, FakeRepo>();

  const userJson = (login: string) => ({
    login,
    id: numericId(login),
    type: 'User',
    url: `${apiUrl}/users/${login}`,
    html_url: `${WEB}/${login}`,
    avatar_url: `https://avatars.githubusercontent.com/u/${numericId(login)}`,
  });

  function commit(repo: FakeRepo, parents: string[], tree: Map<string, Buffer>, message: string, author: string): Commit {
    const date = now();
    const sha = gitSha('commit', `${parents.join(',')}\n${message}\n${author}\n${date}\n${repo.commits.size}`);
    const c: Commit = { sha, message, parents, author, date, tree };
    repo.commits.set(sha, c);
    repo.updatedAt = date;
    return c;
  }

  function seedRepo(owner: string, name: string, files: Record<string, string | Buffer>): FakeRepo {
    const at = now();
    const repo: FakeRepo = {
      id: numericId(`${owner}/${name}`),
      owner,
      name,
      private: false,
      description: 'My first repository on GitHub!',
      defaultBranch: 'main',
      topics: ['demo'],
      createdAt: at,
      updatedAt: at,
      branches: new Map(),
      protectedBranches: new Set(['main']),
      commits: new Map(),
      issues: [],
    };
    const tree = new Map(Object.entries(files).map(([p, c]) => [p, Buffer.isBuffer(c) ? c : Buffer.from(c)]));
    repo.branches.set('main', commit(repo, [], tree, 'Initial commit', owner).sha);
    repos.set(`${owner}/${name}`.toLowerCase(), repo);
    return repo;
  }

  function newIssue(repo: FakeRepo, fields: Partial<FakeIssue> & { title: string; user: string }): FakeIssue {
    const at = now();
    const issue: FakeIssue = {
      number: repo.issues.length + 1,
      body: null,
      state: 'open',
      stateReason: null,
      labels: [],
      assignees: [],
      comments: [],
      createdAt: at,
      updatedAt: at,
      closedAt: null,
      ...fields,
    };
    repo.issues.push(issue);
    return issue;
  }

  // octocat/hello-world: main (protected) plus a feature branch with an open pull request.
  const hello = seedRepo('octocat', 'hello-world', {
    'README.md': '# Hello World\n\nThis is a demo repository. Grüße!\n',
    'src/index.ts': "export const greet = (name: string) => 'Hello, ' + name;\n",
    'docs/logo.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d]),
  });
  const mainHead = hello.commits.get(hello.branches.get('main')!)!;
  const featureTree = new Map(mainHead.tree);
  featureTree.set('src/index.ts', Buffer.from("export const greet = (name: string) => 'Hello, ' + name + '!';\n"));
  hello.branches.set('feature/greeting', commit(hello, [mainHead.sha], featureTree, 'Greet with enthusiasm', 'octocat').sha);
  newIssue(hello, { title: 'Found a bug', body: 'The greeting lacks punctuation.', labels: ['bug'], user: 'octocat' });
  const closed = newIssue(hello, { title: 'Add dark mode', labels: ['enhancement'], user: 'hubot' });
  Object.assign(closed, { state: 'closed', stateReason: 'completed', closedAt: now() });
  newIssue(hello, {
    title: 'Improve greeting',
    body: 'Fixes #1',
    user: 'octocat',
    pull: { head: 'feature/greeting', base: 'main', draft: false, mergedAt: null, mergeSha: null },
  });

  const repoOf = (req: Request, res: Response): FakeRepo | undefined => {
    const repo = repos.get(`${req.params.owner}/${req.params.repo}`.toLowerCase());
    if (!repo) fail(res, 404, 'Not Found');
    return repo;
  };
  const full = (repo: FakeRepo) => `${repo.owner}/${repo.name}`;
  /** A branch name or commit sha, resolved to a commit. */
  const commitAt = (repo: FakeRepo, ref: string | undefined) => repo.commits.get(repo.branches.get(ref ?? repo.defaultBranch) ?? ref ?? '');

  const repoJson = (repo: FakeRepo) => ({
    id: repo.id,
    name: repo.name,
    full_name: full(repo),
    private: repo.private,
    owner: userJson(repo.owner),
    html_url: `${WEB}/${full(repo)}`,
    description: repo.description,
    fork: false,
    url: `${apiUrl}/repos/${full(repo)}`,
    created_at: repo.createdAt,
    updated_at: repo.updatedAt,
    pushed_at: repo.updatedAt,
    language: 'TypeScript',
    stargazers_count: 42,
    watchers_count: 42,
    forks_count: 7,
    open_issues_count: repo.issues.filter((i) => i.state === 'open').length,
    topics: repo.topics,
    visibility: repo.private ? 'private' : 'public',
    archived: false,
    disabled: false,
    default_branch: repo.defaultBranch,
  });

  const issueJson = (repo: FakeRepo, i: FakeIssue) => {
    const kind = i.pull ? 'pull' : 'issues';
    return {
      id: numericId(`${full(repo)}#${i.number}`),
      url: `${apiUrl}/repos/${full(repo)}/issues/${i.number}`,
      repository_url: `${apiUrl}/repos/${full(repo)}`,
      html_url: `${WEB}/${full(repo)}/${kind}/${i.number}`,
      number: i.number,
      state: i.state,
      state_reason: i.stateReason,
      title: i.title,
      body: i.body,
      user: userJson(i.user),
      labels: i.labels.map((name) => ({ id: numericId(name), name, color: 'd73a4a', default: false })),
      assignee: i.assignees[0] ? userJson(i.assignees[0]) : null,
      assignees: i.assignees.map(userJson),
      locked: false,
      comments: i.comments.length,
      created_at: i.createdAt,
      updated_at: i.updatedAt,
      closed_at: i.closedAt,
      author_association: 'OWNER',
      ...(i.pull
        ? {
            pull_request: {
              url: `${apiUrl}/repos/${full(repo)}/pulls/${i.number}`,
              html_url: `${WEB}/${full(repo)}/pull/${i.number}`,
              merged_at: i.pull.mergedAt,
            },
          }
        : {}),
    };
  };

  const branchRef = (repo: FakeRepo, ref: string) => {
    const sha = repo.branches.get(ref) ?? null;
    return { label: `${repo.owner}:${ref}`, ref, sha, user: userJson(repo.owner), repo: { full_name: full(repo) } };
  };

  /** Files that differ between two trees. */
  const changedFiles = (a: Map<string, Buffer>, b: Map<string, Buffer>) =>
    [...new Set([...a.keys(), ...b.keys()])].filter((p) => {
      const [x, y] = [a.get(p), b.get(p)];
      return !x || !y || !x.equals(y);
    });

  /** The newest commit both histories contain (every commit here descends from one root). */
  const mergeBase = (repo: FakeRepo, a: Commit, b: Commit): Commit => {
    const seen = new Set<string>();
    const walk = (c: Commit | undefined): void => {
      if (!c || seen.has(c.sha)) return;
      seen.add(c.sha);
      for (const p of c.parents) walk(repo.commits.get(p));
    };
    walk(a);
    let c: Commit | undefined = b;
    while (c && !seen.has(c.sha)) c = repo.commits.get(c.parents[0] ?? '');
    return c ?? b;
  };

  /** What a pull request changes: head against its merge base with base, as GitHub diffs it. */
  const pullChanges = (repo: FakeRepo, head: Commit, base: Commit) => {
    const from = mergeBase(repo, base, head).tree;
    return changedFiles(from, head.tree);
  };

  /** A pull request; `detailed` adds what only GET /pulls/{n} answers (merge state, counts). */
  const pullJson = (repo: FakeRepo, i: FakeIssue, detailed: boolean) => {
    const pull = i.pull!;
    const head = commitAt(repo, pull.head);
    const base = commitAt(repo, pull.base);
    const changed = head && base ? pullChanges(repo, head, base) : [];
    const summary = {
      id: numericId(`${full(repo)}!${i.number}`),
      url: `${apiUrl}/repos/${full(repo)}/pulls/${i.number}`,
      html_url: `${WEB}/${full(repo)}/pull/${i.number}`,
      number: i.number,
      state: i.state,
      locked: false,
      title: i.title,
      body: i.body,
      user: userJson(i.user),
      labels: i.labels.map((name) => ({ name })),
      draft: pull.draft,
      head: branchRef(repo, pull.head),
      base: branchRef(repo, pull.base),
      created_at: i.createdAt,
      updated_at: i.updatedAt,
      closed_at: i.closedAt,
      merged_at: pull.mergedAt,
      merge_commit_sha: pull.mergeSha,
      author_association: 'OWNER',
    };
    if (!detailed) return summary;
    const open = i.state === 'open';
    return {
      ...summary,
      merged: pull.mergedAt !== null,
      mergeable: open ? changed.length > 0 : null,
      mergeable_state: open ? (changed.length > 0 ? 'clean' : 'unknown') : 'unknown',
      comments: i.comments.length,
      commits: 1,
      additions: changed.length * 3,
      deletions: changed.length,
      changed_files: changed.length,
    };
  };

  const commitJson = (repo: FakeRepo, c: Commit) => ({
    sha: c.sha,
    url: `${apiUrl}/repos/${full(repo)}/commits/${c.sha}`,
    html_url: `${WEB}/${full(repo)}/commit/${c.sha}`,
    commit: {
      message: c.message,
      author: { name: c.author, email: `${c.author}@users.noreply.github.com`, date: c.date },
      committer: { name: c.author, email: `${c.author}@users.noreply.github.com`, date: c.date },
      tree: { sha: gitSha('tree', [...c.tree.keys()].join('\n')) },
    },
    author: userJson(c.author),
    committer: userJson(c.author),
    parents: c.parents.map((sha) => ({ sha, url: `${apiUrl}/repos/${full(repo)}/commits/${sha}` })),
  });

  const entryJson = (repo: FakeRepo, ref: string, path: string, type: 'file' | 'dir', data?: Buffer) => ({
    type,
    name: path.split('/').pop()!,
    path,
    sha: data ? gitSha('blob', data) : gitSha('tree', path),
    size: data?.length ?? 0,
    url: `${apiUrl}/repos/${full(repo)}/contents/${path}?ref=${ref}`,
    html_url: `${WEB}/${full(repo)}/${type === 'file' ? 'blob' : 'tree'}/${ref}/${path}`,
    git_url: `${apiUrl}/repos/${full(repo)}/git/${type === 'file' ? 'blobs' : 'trees'}/${data ? gitSha('blob', data) : ''}`,
    download_url: type === 'file' ? `https://raw.githubusercontent.com/${full(repo)}/${ref}/${path}` : null,
  });

  const router = express.Router();

  router.get('/user', (_req, res) => {
    const login = res.locals.login as string;
    res.json({ ...userJson(login), name: login, email: `${login}@example.com` });
  });

  router.get('/user/repos', (req, res) => {
    const login = res.locals.login as string;
    const perPage = Number(req.query.per_page ?? 30);
    const listed = Array.from({ length: 3 }, (_, i) => ({
      id: 1000 + i,
      name: `repo-${i}`,
      full_name: `${login}/repo-${i}`,
      private: i === 2,
      description: `Repository ${i}`,
      default_branch: 'main',
      updated_at: '2026-11-01T00:00:00Z',
      owner: { login },
    }));
    res.json(listed.slice(0, perPage));
  });

  router.get('/repos/:owner/:repo', (req, res) => {
    const repo = repoOf(req, res);
    if (repo) res.json(repoJson(repo));
  });

  router.get('/repos/:owner/:repo/branches', (req, res) => {
    const repo = repoOf(req, res);
    if (!repo) return;
    const rows = [...repo.branches]
      .map(([name, sha]) => ({
        name,
        commit: { sha, url: `${apiUrl}/repos/${full(repo)}/commits/${sha}` },
        protected: repo.protectedBranches.has(name),
      }))
      .filter((b) => req.query.protected !== 'true' || b.protected);
    res.json(pageOf(rows, intParam(req.query.page, 1), intParam(req.query.per_page, 30, 100)));
  });

  router.get('/repos/:owner/:repo/commits', (req, res) => {
    const repo = repoOf(req, res);
    if (!repo) return;
    const q = req.query as Record<string, string | undefined>;
    const history: Commit[] = [];
    for (let c = commitAt(repo, q.sha); c; c = repo.commits.get(c.parents[0] ?? '')) history.push(c);
    if (!history.length) return fail(res, 404, `No commit found for SHA: ${q.sha}`);
    const rows = history.filter((c) => {
      const parent = repo.commits.get(c.parents[0] ?? '');
      if (q.path && parent?.tree.get(q.path)?.equals(c.tree.get(q.path) ?? Buffer.alloc(0))) return false;
      if (q.path && !parent && !c.tree.has(q.path)) return false;
      if (q.author && q.author !== c.author && q.author !== `${c.author}@users.noreply.github.com`) return false;
      return !(q.since && c.date < q.since) && !(q.until && c.date > q.until);
    });
    res.json(pageOf(rows, intParam(q.page, 1), intParam(q.per_page, 30, 100)).map((c) => commitJson(repo, c)));
  });

  router.get('/repos/:owner/:repo/issues', (req, res) => {
    const repo = repoOf(req, res);
    if (!repo) return;
    const q = req.query as Record<string, string | undefined>;
    const state = q.state ?? 'open';
    const labels = q.labels ? q.labels.split(',').map((l) => l.trim().toLowerCase()) : [];
    const sort = q.sort ?? 'created';
    const key = (i: FakeIssue) =>
      sort === 'updated' ? i.updatedAt : sort === 'comments' ? String(i.comments.length).padStart(9, '0') : i.createdAt;
    const rows = repo.issues
      .filter((i) => state === 'all' || i.state === state)
      .filter((i) => labels.every((l) => i.labels.some((x) => x.toLowerCase() === l)))
      .filter((i) => !q.creator || i.user === q.creator)
      .filter((i) => !q.since || i.updatedAt >= q.since)
      .filter((i) => {
        if (!q.assignee) return true;
        if (q.assignee === 'none') return i.assignees.length === 0;
        if (q.assignee === '*') return i.assignees.length > 0;
        return i.assignees.includes(q.assignee);
      })
      .sort((a, b) => (key(a) === key(b) ? a.number - b.number : key(a) < key(b) ? -1 : 1));
    if ((q.direction ?? 'desc') === 'desc') rows.reverse();
    res.json(pageOf(rows, intParam(q.page, 1), intParam(q.per_page, 30, 100)).map((i) => issueJson(repo, i)));
  });

  router.post('/repos/:owner/:repo/issues', (req, res) => {
    const repo = repoOf(req, res);
    if (!repo) return;
    const body = req.body ?? {};
    if (typeof body.title !== 'string' || !body.title) return validation(res, 'Issue', 'title');
    const issue = newIssue(repo, {
      title: body.title,
      body: body.body ?? null,
      labels: (body.labels ?? []).map((l: string | { name: string }) => (typeof l === 'string' ? l : l.name)),
      assignees: body.assignees ?? [],
      user: res.locals.login,
    });
    res.status(201).json(issueJson(repo, issue));
  });

  const issueOf = (req: Request, res: Response, repo: FakeRepo) => {
    const issue = repo.issues.find((i) => i.number === Number(req.params.number));
    if (!issue) fail(res, 404, 'Not Found');
    return issue;
  };

  router.get('/repos/:owner/:repo/issues/:number', (req, res) => {
    const repo = repoOf(req, res);
    const issue = repo && issueOf(req, res, repo);
    if (repo && issue) res.json(issueJson(repo, issue));
  });

  router.patch('/repos/:owner/:repo/issues/:number', (req, res) => {
    const repo = repoOf(req, res);
    const issue = repo && issueOf(req, res, repo);
    if (!repo || !issue) return;
    const body = req.body ?? {};
    if (body.state !== undefined && body.state !== 'open' && body.state !== 'closed') return validation(res, 'Issue', 'state', 'invalid');
    if (body.title !== undefined) issue.title = body.title;
    if (body.body !== undefined) issue.body = body.body;
    if (body.labels !== undefined) issue.labels = body.labels.map((l: string | { name: string }) => (typeof l === 'string' ? l : l.name));
    if (body.assignees !== undefined) issue.assignees = body.assignees;
    if (body.state === 'closed' && issue.state === 'open') {
      Object.assign(issue, { state: 'closed', closedAt: now(), stateReason: body.state_reason ?? 'completed' });
    } else if (body.state === 'open' && issue.state === 'closed') {
      Object.assign(issue, { state: 'open', closedAt: null, stateReason: 'reopened' });
    }
    issue.updatedAt = now();
    res.json(issueJson(repo, issue));
  });

  router.post('/repos/:owner/:repo/issues/:number/comments', (req, res) => {
    const repo = repoOf(req, res);
    const issue = repo && issueOf(req, res, repo);
    if (!repo || !issue) return;
    if (typeof req.body?.body !== 'string' || !req.body.body) return validation(res, 'IssueComment', 'body');
    const comment = { id: ++commentIds, body: req.body.body as string, user: res.locals.login as string, created_at: now() };
    issue.comments.push(comment);
    issue.updatedAt = comment.created_at;
    res.status(201).json({
      id: comment.id,
      url: `${apiUrl}/repos/${full(repo)}/issues/comments/${comment.id}`,
      html_url: `${issueJson(repo, issue).html_url}#issuecomment-${comment.id}`,
      issue_url: `${apiUrl}/repos/${full(repo)}/issues/${issue.number}`,
      body: comment.body,
      user: userJson(comment.user),
      created_at: comment.created_at,
      updated_at: comment.created_at,
      author_association: 'OWNER',
    });
  });

  const pulls = (repo: FakeRepo) => repo.issues.filter((i) => i.pull);

  router.get('/repos/:owner/:repo/pulls', (req, res) => {
    const repo = repoOf(req, res);
    if (!repo) return;
    const q = req.query as Record<string, string | undefined>;
    const state = q.state ?? 'open';
    const rows = pulls(repo)
      .filter((i) => state === 'all' || i.state === state)
      .filter((i) => !q.base || i.pull!.base === q.base)
      .filter((i) => !q.head || `${repo.owner}:${i.pull!.head}` === q.head);
    if ((q.direction ?? 'desc') === 'desc') rows.reverse();
    res.json(pageOf(rows, intParam(q.page, 1), intParam(q.per_page, 30, 100)).map((i) => pullJson(repo, i, false)));
  });

  router.get('/repos/:owner/:repo/pulls/:number', (req, res) => {
    const repo = repoOf(req, res);
    const pull = repo && pulls(repo).find((i) => i.number === Number(req.params.number));
    if (!repo) return;
    if (!pull) return fail(res, 404, 'Not Found');
    res.json(pullJson(repo, pull, true));
  });

  router.post('/repos/:owner/:repo/pulls', (req, res) => {
    const repo = repoOf(req, res);
    if (!repo) return;
    const body = req.body ?? {};
    if (!body.title) return validation(res, 'PullRequest', 'title');
    const head = String(body.head ?? '').replace(new RegExp(`^${repo.owner}:`, 'i'), '');
    if (!repo.branches.has(head)) return validation(res, 'PullRequest', 'head', 'invalid');
    if (!repo.branches.has(body.base)) return validation(res, 'PullRequest', 'base', 'invalid');
    if (repo.branches.get(head) === repo.branches.get(body.base)) {
      return fail(res, 422, 'Validation Failed', [
        { resource: 'PullRequest', code: 'custom', message: `No commits between ${body.base} and ${head}` },
      ]);
    }
    if (pulls(repo).some((p) => p.state === 'open' && p.pull!.head === head && p.pull!.base === body.base)) {
      return fail(res, 422, 'Validation Failed', [
        { resource: 'PullRequest', code: 'custom', message: `A pull request already exists for ${repo.owner}:${head}.` },
      ]);
    }
    const pull = newIssue(repo, {
      title: body.title,
      body: body.body ?? null,
      user: res.locals.login,
      pull: { head, base: body.base, draft: Boolean(body.draft), mergedAt: null, mergeSha: null },
    });
    res.status(201).json(pullJson(repo, pull, true));
  });

  router.put('/repos/:owner/:repo/pulls/:number/merge', (req, res) => {
    const repo = repoOf(req, res);
    const pull = repo && pulls(repo).find((i) => i.number === Number(req.params.number));
    if (!repo) return;
    if (!pull?.pull) return fail(res, 404, 'Not Found');
    const headSha = repo.branches.get(pull.pull.head);
    const base = commitAt(repo, pull.pull.base);
    if (pull.state !== 'open' || !headSha || !base) return fail(res, 405, 'Pull Request is not mergeable');
    if (req.body?.sha && req.body.sha !== headSha) return fail(res, 409, 'Head branch was modified. Review and try the merge again.');
    const method = req.body?.merge_method ?? 'merge';
    if (!['merge', 'squash', 'rebase'].includes(method)) return validation(res, 'PullRequest', 'merge_method', 'invalid');
    const head = repo.commits.get(headSha)!;
    const title =
      req.body?.commit_title ??
      (method === 'merge' ? `Merge pull request #${pull.number} from ${repo.owner}/${pull.pull.head}` : pull.title);
    const parents = method === 'merge' ? [base.sha, headSha] : [base.sha];
    // Base plus what the pull request changes (the fake has no conflicts).
    const tree = new Map(base.tree);
    for (const path of pullChanges(repo, head, base)) {
      const data = head.tree.get(path);
      if (data) tree.set(path, data);
      else tree.delete(path);
    }
    const merged = commit(repo, parents, tree, [title, req.body?.commit_message].filter(Boolean).join('\n\n'), res.locals.login);
    repo.branches.set(pull.pull.base, merged.sha);
    const at = now();
    Object.assign(pull, { state: 'closed', closedAt: at, updatedAt: at });
    Object.assign(pull.pull, { mergedAt: at, mergeSha: merged.sha });
    res.json({ sha: merged.sha, merged: true, message: 'Pull Request successfully merged' });
  });

  router.get('/repos/:owner/:repo/contents{/*path}', (req, res) => {
    const repo = repoOf(req, res);
    if (!repo) return;
    const path = ((req.params as { path?: string[] }).path ?? []).join('/');
    const ref = (req.query.ref as string | undefined) ?? repo.defaultBranch;
    const at = commitAt(repo, ref);
    if (!at) return fail(res, 404, `No commit found for the ref ${ref}`);
    const data = at.tree.get(path);
    if (data) {
      const tooLarge = data.length > MAX_CONTENT_BYTES;
      const base64 = tooLarge ? '' : (data.toString('base64').match(/.{1,60}/g) ?? []).join('\n');
      return res.json({
        ...entryJson(repo, ref, path, 'file', data),
        encoding: tooLarge ? 'none' : 'base64',
        content: tooLarge ? '' : `${base64}\n`,
      });
    }
    const prefix = path ? `${path}/` : '';
    const children = new Map<string, ReturnType<typeof entryJson>>();
    for (const [p, d] of at.tree) {
      if (!p.startsWith(prefix)) continue;
      const [name, ...rest] = p.slice(prefix.length).split('/');
      children.set(name, rest.length ? entryJson(repo, ref, prefix + name, 'dir') : entryJson(repo, ref, p, 'file', d));
    }
    if (!children.size) return fail(res, 404, 'Not Found');
    res.json([...children.values()].sort((a, b) => (a.name < b.name ? -1 : 1))); // git tree (byte) order
  });

  router.put('/repos/:owner/:repo/contents/*path', (req, res) => {
    const repo = repoOf(req, res);
    if (!repo) return;
    const path = (req.params as { path: string[] }).path.join('/');
    const body = req.body ?? {};
    if (!body.message) return validation(res, 'Commit', 'message');
    if (typeof body.content !== 'string') return validation(res, 'Commit', 'content');
    const branch = body.branch ?? repo.defaultBranch;
    const head = commitAt(repo, branch);
    if (!repo.branches.has(branch) || !head) return fail(res, 404, `Branch ${branch} not found`);
    const existing = head.tree.get(path);
    if (existing && !body.sha) return fail(res, 422, 'Invalid request.\n\n"sha" wasn\'t supplied.');
    if (existing && body.sha !== gitSha('blob', existing)) return fail(res, 409, `${path} does not match ${body.sha}`);
    const data = Buffer.from(body.content, 'base64');
    const tree = new Map(head.tree).set(path, data);
    const c = commit(repo, [head.sha], tree, body.message, res.locals.login);
    repo.branches.set(branch, c.sha);
    const json = commitJson(repo, c);
    res.status(existing ? 200 : 201).json({
      content: entryJson(repo, branch, path, 'file', data),
      commit: { sha: c.sha, url: json.url, html_url: json.html_url, message: c.message, author: json.commit.author, parents: json.parents },
    });
  });

  const searchResult = <T>(items: T[], req: Request) => ({
    total_count: items.length,
    incomplete_results: false,
    items: pageOf(items, intParam(req.query.page, 1), intParam(req.query.per_page, 30, 100)),
  });

  router.get('/search/code', (req, res) => {
    const { qualifiers, terms } = tokenize(String(req.query.q ?? ''));
    if (!terms.length) return fail(res, 422, 'Validation Failed', [{ resource: 'Search', field: 'q', code: 'invalid' }]);
    const want = (key: string) => qualifiers.filter(([k]) => k === key).map(([, v]) => v.toLowerCase());
    const [inRepos, owners, paths] = [want('repo'), [...want('org'), ...want('user')], want('path')];
    const hits = [];
    for (const repo of repos.values()) {
      if (inRepos.length && !inRepos.includes(full(repo).toLowerCase())) continue;
      if (owners.length && !owners.includes(repo.owner.toLowerCase())) continue;
      for (const [path, data] of commitAt(repo, repo.defaultBranch)!.tree) {
        const text = data.toString('utf8').toLowerCase();
        if (paths.length && !paths.some((p) => path.toLowerCase().startsWith(p.replace(/^\//, '')))) continue;
        if (!terms.every((t) => text.includes(t) || path.toLowerCase().includes(t))) continue;
        const entry = entryJson(repo, repo.defaultBranch, path, 'file', data);
        hits.push({
          name: entry.name,
          path,
          sha: entry.sha,
          url: entry.url,
          git_url: entry.git_url,
          html_url: entry.html_url,
          repository: repoJson(repo),
          score: 1,
        });
      }
    }
    res.json(searchResult(hits, req));
  });

  router.get('/search/issues', (req, res) => {
    const { qualifiers, terms } = tokenize(String(req.query.q ?? ''));
    const hits = [];
    for (const repo of repos.values()) {
      for (const i of repo.issues) {
        const ok = qualifiers.every(([key, raw]) => {
          const v = raw.toLowerCase();
          if (key === 'repo') return full(repo).toLowerCase() === v;
          if (key === 'is' || key === 'state' || key === 'type') {
            if (v === 'issue') return !i.pull;
            if (v === 'pr' || v === 'pull-request') return Boolean(i.pull);
            if (v === 'merged') return Boolean(i.pull?.mergedAt);
            return i.state === v;
          }
          if (key === 'label') return i.labels.some((l) => l.toLowerCase() === v);
          if (key === 'author') return i.user.toLowerCase() === v;
          if (key === 'assignee') return i.assignees.some((a) => a.toLowerCase() === v);
          if (key === 'org' || key === 'user') return repo.owner.toLowerCase() === v;
          return true;
        });
        const text = `${i.title}\n${i.body ?? ''}`.toLowerCase();
        if (ok && terms.every((t) => text.includes(t))) hits.push({ ...issueJson(repo, i), score: 1 });
      }
    }
    const sort = req.query.sort as string | undefined;
    if (sort === 'created' || sort === 'updated') {
      const field = sort === 'created' ? 'created_at' : 'updated_at';
      hits.sort((a, b) => (a[field] < b[field] ? -1 : a[field] > b[field] ? 1 : 0));
      if (req.query.order !== 'asc') hits.reverse();
    }
    res.json(searchResult(hits, req));
  });

  return { repos, router };
}

/** GitHub's answer to a missing or invalid token. */
export const githubUnauthorized = (res: Response) =>
  res.status(401).json({ message: 'Bad credentials', documentation_url: DOCS, status: '401' });
