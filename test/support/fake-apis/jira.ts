import express, { type Request, type Response } from 'express';
import { compileJql, JqlError, type JqlIssueView } from './jql.js';
import { hexId, intParam } from './util.js';

/**
 * An in-memory Jira Cloud behind Atlassian's OAuth gateway: `/oauth/token/accessible-resources`
 * and the platform REST API v3 at `/ex/jira/{cloudId}/rest/api/3` with its real shapes
 * (https://developer.atlassian.com/cloud/jira/platform/rest/v3/): issues with ADF descriptions
 * and comments, the enhanced JQL search, transitions, assignment and projects.
 */

type Adf = { type: 'doc'; version: 1; content: unknown[] };

interface FakeJiraComment {
  id: string;
  author: string;
  body: Adf;
  created: string;
}

export interface FakeJiraIssue {
  id: string;
  key: string;
  project: string;
  summary: string;
  description: Adf | null;
  statusId: string;
  issuetype: string;
  priority: string;
  labels: string[];
  assignee: string | null;
  reporter: string;
  parent: string | null;
  comments: FakeJiraComment[];
  created: string;
  updated: string;
}

export interface FakeJira {
  /** The Jira site the gateway serves; a Confluence site is listed before it. */
  site: { id: string; url: string; name: string };
  issues: Map<string, FakeJiraIssue>;
  /** accountId → display name. */
  users: Map<string, string>;
  accountIdOf(login: string): string;
  router: express.Router;
}

const STATUSES: Record<string, { name: string; category: { id: number; key: string; colorName: string; name: string } }> = {
  '10000': { name: 'To Do', category: { id: 2, key: 'new', colorName: 'blue-gray', name: 'To Do' } },
  '3': { name: 'In Progress', category: { id: 4, key: 'indeterminate', colorName: 'yellow', name: 'In Progress' } },
  '10001': { name: 'Done', category: { id: 3, key: 'done', colorName: 'green', name: 'Done' } },
};
/** Transition id → target status id, available from every other status. */
const TRANSITIONS: Record<string, { name: string; to: string }> = {
  '11': { name: 'To Do', to: '10000' },
  '21': { name: 'In Progress', to: '3' },
  '31': { name: 'Done', to: '10001' },
};
const ISSUE_TYPES = ['Task', 'Bug', 'Story', 'Epic', 'Subtask'];
const PRIORITIES = ['Highest', 'High', 'Medium', 'Low', 'Lowest'];
const PROJECTS = [
  { id: '10000', key: 'DEMO', name: 'Demo' },
  { id: '10001', key: 'OPS', name: 'Operations' },
];
const SEARCH_BODY_KEYS = new Set([
  'jql',
  'maxResults',
  'fields',
  'nextPageToken',
  'expand',
  'properties',
  'fieldsByKeys',
  'failFast',
  'reconcileIssues',
]);

/** Jira's timestamp format, e.g. 2026-11-01T10:00:00.000+0000. */
const now = () => new Date().toISOString().replace('Z', '+0000');
const errors = (res: Response, status: number, errorMessages: string[], fieldErrors: Record<string, string> = {}) =>
  res.status(status).json({ errorMessages, errors: fieldErrors });
const isAdf = (v: unknown): v is Adf =>
  typeof v === 'object' && v !== null && (v as Adf).type === 'doc' && (v as Adf).version === 1 && Array.isArray((v as Adf).content);
const adf = (text: string): Adf => ({ type: 'doc', version: 1, content: [{ type: 'paragraph', content: [{ type: 'text', text }] }] });
const adfText = (doc: unknown): string =>
  typeof doc !== 'object' || doc === null
    ? ''
    : [(doc as { text?: string }).text ?? '', ...((doc as { content?: unknown[] }).content ?? []).map(adfText)].join(' ');

export function createFakeJira(apiUrl: string): FakeJira {
  const site = { id: '5e0c3f2a-1b7d-4c39-9f0e-6f1f0d1a2b3c', url: 'https://acme.atlassian.net', name: 'acme' };
  const users = new Map<string, string>();
  const accountIdOf = (login: string) => {
    const id = `712020:${hexId(login, 8)}-${hexId(`${login}/a`, 4)}-${hexId(`${login}/b`, 4)}-${hexId(`${login}/c`, 12)}`;
    if (!users.has(id)) users.set(id, login);
    return id;
  };
  const alice = accountIdOf('Alice Example');
  const issues = new Map<string, FakeJiraIssue>();
  let nextId = 10001;
  let nextComment = 10100;

  const addIssue = (fields: Partial<FakeJiraIssue> & { project: string; summary: string; reporter: string }) => {
    const number = [...issues.values()].filter((i) => i.project === fields.project).length + 1;
    const at = now();
    const issue: FakeJiraIssue = {
      id: String(nextId++),
      key: `${fields.project}-${number}`,
      description: null,
      statusId: '10000',
      issuetype: 'Task',
      priority: 'Medium',
      labels: [],
      assignee: null,
      parent: null,
      comments: [],
      created: at,
      updated: at,
      ...fields,
    };
    issues.set(issue.key, issue);
    return issue;
  };
  addIssue({
    project: 'DEMO',
    summary: 'Login page crashes on Safari',
    description: adf('Steps: open the login page in Safari 17.'),
    issuetype: 'Bug',
    priority: 'High',
    statusId: '3',
    labels: ['frontend'],
    assignee: alice,
    reporter: alice,
    comments: [{ id: String(nextComment++), author: alice, body: adf('Reproduced on macOS 14.'), created: now() }],
  });
  addIssue({ project: 'DEMO', summary: 'Write onboarding docs', reporter: alice });
  addIssue({ project: 'OPS', summary: 'Rotate database credentials', statusId: '10001', reporter: alice });

  const base = `${apiUrl}/ex/jira/${site.id}/rest/api/3`;
  const userJson = (accountId: string) => ({
    self: `${base}/user?accountId=${accountId}`,
    accountId,
    accountType: 'atlassian',
    displayName: users.get(accountId) ?? accountId,
    active: true,
    timeZone: 'Europe/Berlin',
    avatarUrls: { '48x48': `https://avatar-management--avatars.us-west-2.prod.public.atl-paas.net/${accountId}/48` },
  });
  const statusJson = (id: string) => ({
    self: `${base}/status/${id}`,
    id,
    name: STATUSES[id].name,
    statusCategory: { self: `${base}/statuscategory/${STATUSES[id].category.id}`, ...STATUSES[id].category },
  });
  const projectJson = (p: (typeof PROJECTS)[number], withIssueTypes: boolean) => ({
    expand: 'description,lead,issueTypes,url,projectKeys,permissions,insight',
    self: `${base}/project/${p.id}`,
    id: p.id,
    key: p.key,
    name: p.name,
    projectTypeKey: 'software',
    simplified: false,
    style: 'classic',
    isPrivate: false,
    ...(withIssueTypes
      ? {
          issueTypes: ISSUE_TYPES.map((name, n) => ({
            self: `${base}/issuetype/${10001 + n}`,
            id: String(10001 + n),
            name,
            subtask: name === 'Subtask',
          })),
        }
      : {}),
  });
  const commentJson = (c: FakeJiraComment) => ({
    self: `${base}/issue/comment/${c.id}`,
    id: c.id,
    author: userJson(c.author),
    updateAuthor: userJson(c.author),
    body: c.body,
    created: c.created,
    updated: c.created,
    jsdPublic: true,
  });
  const allFields = (i: FakeJiraIssue): Record<string, unknown> => ({
    summary: i.summary,
    description: i.description,
    status: statusJson(i.statusId),
    issuetype: { id: String(10001 + ISSUE_TYPES.indexOf(i.issuetype)), name: i.issuetype, subtask: i.issuetype === 'Subtask' },
    priority: { id: String(1 + PRIORITIES.indexOf(i.priority)), name: i.priority },
    labels: i.labels,
    assignee: i.assignee ? userJson(i.assignee) : null,
    reporter: userJson(i.reporter),
    project: projectJson(PROJECTS.find((p) => p.key === i.project)!, false),
    parent: i.parent ? { id: issues.get(i.parent)?.id, key: i.parent } : null,
    comment: {
      comments: i.comments.map(commentJson),
      self: `${base}/issue/${i.id}/comment`,
      maxResults: i.comments.length,
      total: i.comments.length,
      startAt: 0,
    },
    created: i.created,
    updated: i.updated,
  });
  /** An issue with the requested fields only (`*all` or none named: every field). */
  const issueJson = (i: FakeJiraIssue, fields: string[] | undefined) => {
    const every = allFields(i);
    const wanted = !fields || fields.includes('*all') ? Object.keys(every) : fields;
    return {
      expand: 'renderedFields,names,schema,operations,editmeta,changelog,versionedRepresentations',
      id: i.id,
      self: `${base}/issue/${i.id}`,
      key: i.key,
      fields: Object.fromEntries(wanted.filter((f) => f in every).map((f) => [f, every[f]])),
    };
  };
  const view = (i: FakeJiraIssue): JqlIssueView => ({
    key: i.key,
    project: i.project,
    summary: i.summary,
    description: adfText(i.description),
    status: STATUSES[i.statusId].name,
    statusCategory: STATUSES[i.statusId].category.name,
    assignee: i.assignee,
    reporter: i.reporter,
    issuetype: i.issuetype,
    priority: i.priority,
    labels: i.labels,
    created: i.created,
    updated: i.updated,
  });

  const router = express.Router();

  router.get('/oauth/token/accessible-resources', (_req, res) => {
    res.json([
      {
        id: 'c0ffee00-0000-4000-8000-00000000c0f1',
        url: 'https://acme-wiki.atlassian.net',
        name: 'acme-wiki',
        scopes: ['read:confluence-content.all'],
        avatarUrl: '',
      },
      {
        ...site,
        scopes: ['read:jira-work', 'write:jira-work', 'read:jira-user'],
        avatarUrl: 'https://site-admin-avatar-cdn.prod.public.atl-paas.net/avatars/240/rocket.png',
      },
    ]);
  });

  const api = express.Router();
  router.use(
    '/ex/jira/:cloudId/rest/api/3',
    (req, res, next) => {
      if (req.params.cloudId !== site.id) return res.status(404).json({ code: 404, message: 'Site not found' });
      res.locals.me = accountIdOf(res.locals.login);
      next();
    },
    api,
  );

  const issueOf = (req: Request, res: Response) => {
    const ref = String(req.params.key);
    const issue = issues.get(ref.toUpperCase()) ?? [...issues.values()].find((i) => i.id === ref);
    if (!issue) errors(res, 404, ['Issue does not exist or you do not have permission to see it.']);
    return issue;
  };

  /** Field values from a create/edit body, or the field errors Jira would answer. */
  function readFields(fields: Record<string, any>, creating: boolean): { ok: Partial<FakeJiraIssue> } | { errors: Record<string, string> } {
    const out: Partial<FakeJiraIssue> = {};
    const bad: Record<string, string> = {};
    if (creating) {
      const project = PROJECTS.find((p) => p.key === fields.project?.key || p.id === fields.project?.id);
      if (project) out.project = project.key;
      else bad.project = 'valid project is required';
      const type = ISSUE_TYPES.find((t) => t.toLowerCase() === String(fields.issuetype?.name ?? '').toLowerCase());
      if (type) out.issuetype = type;
      else bad.issuetype = 'Specify a valid issue type';
      if (!fields.summary) bad.summary = 'You must specify a summary of the issue.';
    }
    if (fields.summary !== undefined) out.summary = String(fields.summary);
    if (fields.description !== undefined) {
      if (fields.description === null || isAdf(fields.description)) out.description = fields.description;
      else bad.description = 'Operation value must be an Atlassian Document (see the Atlassian Document Format).';
    }
    if (fields.labels !== undefined) {
      const spaced = (fields.labels as string[]).find((l) => /\s/.test(l));
      if (spaced) bad.labels = `The label '${spaced}' contains spaces which is invalid.`;
      else out.labels = fields.labels;
    }
    if (fields.priority !== undefined) {
      const priority = PRIORITIES.find((p) => p.toLowerCase() === String(fields.priority?.name).toLowerCase());
      if (priority) out.priority = priority;
      else bad.priority = `The priority selected is invalid.`;
    }
    if (fields.assignee !== undefined) {
      const id = fields.assignee?.accountId ?? null;
      if (id === null || users.has(id)) out.assignee = id;
      else bad.assignee = `User '${id}' cannot be assigned issues.`;
    }
    if (fields.parent !== undefined) {
      if (issues.has(String(fields.parent?.key).toUpperCase())) out.parent = String(fields.parent.key).toUpperCase();
      else bad.parent = 'Could not find issue by id or key.';
    }
    return Object.keys(bad).length ? { errors: bad } : { ok: out };
  }

  api.get('/myself', (_req, res) => {
    res.json({ ...userJson(res.locals.me), emailAddress: `${res.locals.login}@example.com` });
  });

  api.post('/search/jql', (req, res) => {
    const body = req.body ?? {};
    if (Object.keys(body).some((k) => !SEARCH_BODY_KEYS.has(k)) || typeof body.jql !== 'string') {
      return errors(res, 400, ['Invalid request payload. Refer to the REST API documentation and try again.']);
    }
    let compiled: ReturnType<typeof compileJql>;
    try {
      compiled = compileJql(body.jql, res.locals.me);
    } catch (err) {
      if (err instanceof JqlError) return errors(res, 400, [err.message]);
      throw err;
    }
    const matches = [...issues.values()].filter((i) => compiled.test(view(i))).sort((a, b) => compiled.compare(view(a), view(b)));
    const start = body.nextPageToken ? Number(Buffer.from(String(body.nextPageToken), 'base64url').toString()) : 0;
    if (!Number.isInteger(start)) return errors(res, 400, ['The provided next page token is invalid or expired.']);
    const max = Math.min(intParam(body.maxResults, 50), 5000);
    const page = matches.slice(start, start + max);
    const isLast = start + max >= matches.length;
    // The enhanced search returns only ids unless fields are named.
    const fields = Array.isArray(body.fields) ? body.fields : ['id'];
    res.json({
      issues: page.map((i) => issueJson(i, fields)),
      ...(isLast ? {} : { nextPageToken: Buffer.from(String(start + max)).toString('base64url') }),
      isLast,
    });
  });

  api.get('/issue/:key', (req, res) => {
    const issue = issueOf(req, res);
    if (issue) res.json(issueJson(issue, typeof req.query.fields === 'string' ? req.query.fields.split(',') : undefined));
  });

  api.post('/issue', (req, res) => {
    const read = readFields(req.body?.fields ?? {}, true);
    if ('errors' in read) return errors(res, 400, [], read.errors);
    const issue = addIssue({ ...(read.ok as FakeJiraIssue), reporter: res.locals.me });
    res.status(201).json({ id: issue.id, key: issue.key, self: `${base}/issue/${issue.id}` });
  });

  api.put('/issue/:key', (req, res) => {
    const issue = issueOf(req, res);
    if (!issue) return;
    const read = readFields(req.body?.fields ?? {}, false);
    if ('errors' in read) return errors(res, 400, [], read.errors);
    Object.assign(issue, read.ok, { updated: now() });
    res.status(204).end();
  });

  api.post('/issue/:key/comment', (req, res) => {
    const issue = issueOf(req, res);
    if (!issue) return;
    if (!isAdf(req.body?.body) || !req.body.body.content.length) return errors(res, 400, ['Comment body can not be empty!']);
    const comment = { id: String(nextComment++), author: res.locals.me, body: req.body.body, created: now() };
    issue.comments.push(comment);
    issue.updated = comment.created;
    res.status(201).json(commentJson(comment));
  });

  api.get('/issue/:key/transitions', (req, res) => {
    const issue = issueOf(req, res);
    if (!issue) return;
    const transitions = Object.entries(TRANSITIONS)
      .filter(([, t]) => t.to !== issue.statusId)
      .map(([id, t]) => ({
        id,
        name: t.name,
        to: statusJson(t.to),
        hasScreen: false,
        isGlobal: true,
        isInitial: false,
        isAvailable: true,
        isConditional: false,
        isLooped: false,
      }));
    res.json({ expand: 'transitions', transitions });
  });

  api.post('/issue/:key/transitions', (req, res) => {
    const issue = issueOf(req, res);
    if (!issue) return;
    const id = String(req.body?.transition?.id ?? '');
    const transition = TRANSITIONS[id];
    if (!transition || transition.to === issue.statusId) return errors(res, 400, [`Transition id '${id}' is not valid for this issue.`]);
    for (const op of req.body?.update?.comment ?? []) {
      if (!isAdf(op?.add?.body)) return errors(res, 400, [], { comment: 'Comment body must be an Atlassian Document.' });
      issue.comments.push({ id: String(nextComment++), author: res.locals.me, body: op.add.body, created: now() });
    }
    Object.assign(issue, { statusId: transition.to, updated: now() });
    res.status(204).end();
  });

  api.put('/issue/:key/assignee', (req, res) => {
    const issue = issueOf(req, res);
    if (!issue) return;
    const id = req.body?.accountId ?? null;
    if (id !== null && !users.has(id)) return errors(res, 400, [], { assignee: `User '${id}' cannot be assigned issues.` });
    Object.assign(issue, { assignee: id, updated: now() });
    res.status(204).end();
  });

  api.get('/project/search', (req, res) => {
    const query = String(req.query.query ?? '').toLowerCase();
    const startAt = Number(req.query.startAt ?? 0);
    const maxResults = intParam(req.query.maxResults, 50, 100);
    const matching = PROJECTS.filter((p) => !query || p.key.toLowerCase().includes(query) || p.name.toLowerCase().includes(query));
    const values = matching.slice(startAt, startAt + maxResults);
    const withIssueTypes = String(req.query.expand ?? '')
      .split(',')
      .includes('issueTypes');
    res.json({
      self: `${base}/project/search?startAt=${startAt}&maxResults=${maxResults}`,
      maxResults,
      startAt,
      total: matching.length,
      isLast: startAt + maxResults >= matching.length,
      values: values.map((p) => projectJson(p, withIssueTypes)),
    });
  });

  return { site, issues, users, accountIdOf, router };
}

/** The gateway's answer to a missing or invalid token. */
export const jiraUnauthorized = (res: Response) => res.status(401).json({ code: 401, message: 'Unauthorized' });
