import express, { type Request, type Response } from 'express';
import { hexId } from './util.js';

/**
 * An in-memory Linear behind its GraphQL API (https://linear.app/developers/graphql): one
 * `POST /graphql` with `{query, variables}`, a personal API key bare in `Authorization`. It
 * parses the operation enough to be honest: root fields and their arguments (variables only),
 * and it answers exactly the selected fields, refusing a field the type does not have, so a tool
 * that selects something Linear lacks fails here too. A key it does not know gets Linear's 401.
 */

export interface FakeLinearUser {
  id: string;
  name: string;
  email: string;
}

export interface FakeLinearState {
  id: string;
  name: string;
  type: 'triage' | 'backlog' | 'unstarted' | 'started' | 'completed' | 'canceled';
  position: number;
}

export interface FakeLinearTeam {
  id: string;
  key: string;
  name: string;
  description: string | null;
  states: FakeLinearState[];
  labels: { id: string; name: string }[];
  issueCount: number;
}

export interface FakeLinearIssue {
  id: string;
  identifier: string;
  teamId: string;
  title: string;
  description: string | null;
  priority: number;
  stateId: string;
  assigneeId: string | null;
  labelIds: string[];
  dueDate: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface FakeLinear {
  /** Personal API keys it accepts, each naming its user. */
  keys: Map<string, string>;
  users: Map<string, FakeLinearUser>;
  teams: FakeLinearTeam[];
  issues: FakeLinearIssue[];
  /** Accepts `key` as the personal API key of the user with this email (created if new). */
  grantKey(key: string, user: { name: string; email: string }): FakeLinearUser;
  /** Operations it answered: name of the root field and whether the key was accepted. */
  calls: { field: string; accepted: boolean }[];
  router: express.Router;
}

const PRIORITY_LABELS = ['No priority', 'Urgent', 'High', 'Medium', 'Low'];
const uuid = (seed: string) => {
  const h = hexId(seed, 32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
};

/** Linear's answer to a missing or unknown key. */
export function linearUnauthorized(res: Response) {
  res.status(401).json({
    errors: [
      {
        message: 'Authentication required, not authenticated',
        extensions: {
          type: 'authentication error',
          code: 'AUTHENTICATION_ERROR',
          statusCode: 401,
          userError: true,
          userPresentableMessage: 'You need to authenticate to access this operation.',
        },
      },
    ],
  });
}

/** A query Linear cannot even validate: HTTP 400. */
class ValidationError extends Error {}
/** A resolver's failure (unknown entity, bad input): HTTP 200 with `errors`, as GraphQL does. */
class InputError extends Error {
  constructor(
    message: string,
    readonly presentable: string,
  ) {
    super(message);
  }
}

// ---- a small GraphQL reader: operations, fields, arguments bound to variables ----

interface Field {
  alias: string;
  name: string;
  args: Record<string, unknown>;
  selections?: Field[];
}

const TOKEN =
  /\s+|#[^\n]*|,|(\.\.\.)|([A-Za-z_][A-Za-z0-9_]*)|(\$[A-Za-z_][A-Za-z0-9_]*)|("(?:[^"\\]|\\.)*")|(-?\d+(?:\.\d+)?)|([{}():!=[\]@])/y;

function tokenize(text: string): string[] {
  const tokens: string[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < text.length) {
    const at = TOKEN.lastIndex;
    const m = TOKEN.exec(text);
    if (!m || TOKEN.lastIndex === at) throw new ValidationError(`Syntax Error: Unexpected character at ${at}.`);
    const token = m[1] ?? m[2] ?? m[3] ?? m[4] ?? m[5] ?? m[6];
    if (token) tokens.push(token);
  }
  return tokens;
}

function parseOperation(text: string, variables: Record<string, unknown>): { kind: 'query' | 'mutation'; fields: Field[] } {
  const tokens = tokenize(text);
  let i = 0;
  const peek = () => tokens[i];
  const take = (expected?: string) => {
    const t = tokens[i++];
    if (t === undefined || (expected && t !== expected))
      throw new ValidationError(`Syntax Error: Expected ${expected ?? 'more'}, found ${t ?? '<EOF>'}.`);
    return t;
  };
  let kind: 'query' | 'mutation' = 'query';
  if (peek() === 'query' || peek() === 'mutation') {
    kind = take() as 'query' | 'mutation';
    if (peek() !== '{' && peek() !== '(') take();
    if (peek() === '(') {
      // Variable definitions: checked only for balance; types are Linear's business.
      let depth = 0;
      do {
        const t = take();
        if (t === '(') depth++;
        if (t === ')') depth--;
      } while (depth > 0);
    }
  }
  const value = (): unknown => {
    const t = take();
    if (t.startsWith('$')) return variables[t.slice(1)];
    if (t.startsWith('"')) return JSON.parse(t);
    if (/^-?\d/.test(t)) return Number(t);
    if (t === 'true' || t === 'false') return t === 'true';
    if (t === 'null') return null;
    throw new ValidationError(`This fake Linear takes arguments as variables or scalars only, found ${t}.`);
  };
  const selectionSet = (): Field[] => {
    take('{');
    const fields: Field[] = [];
    while (peek() !== '}') {
      if (peek() === '...') throw new ValidationError('This fake Linear does not support fragments.');
      let name = take();
      let alias = name;
      if (peek() === ':') {
        take();
        name = take();
      } else alias = name;
      const args: Record<string, unknown> = {};
      if (peek() === '(') {
        take();
        while (peek() !== ')') {
          const arg = take();
          take(':');
          args[arg] = value();
        }
        take(')');
      }
      fields.push({ alias, name, args, selections: peek() === '{' ? selectionSet() : undefined });
    }
    take('}');
    return fields;
  };
  const fields = selectionSet();
  if (i !== tokens.length) throw new ValidationError('Syntax Error: Unexpected text after the operation.');
  return { kind, fields };
}

/** Answers exactly the selected fields of `value`; a field `value` lacks is a validation error. */
function project(value: unknown, field: Field, typeName: string): unknown {
  if (value === null || value === undefined) return null;
  if (Array.isArray(value)) return value.map((v) => project(v, field, typeName));
  if (typeof value === 'object') {
    if (!field.selections) throw new ValidationError(`Field "${field.name}" of type "${typeName}" must have a selection of subfields.`);
    const out: Record<string, unknown> = {};
    for (const sub of field.selections) {
      if (sub.name === '__typename') {
        out[sub.alias] = typeName;
        continue;
      }
      if (!(sub.name in (value as object))) throw new ValidationError(`Cannot query field "${sub.name}" on type "${typeName}".`);
      out[sub.alias] = project((value as Record<string, unknown>)[sub.name], sub, sub.name);
    }
    return out;
  }
  if (field.selections) throw new ValidationError(`Field "${field.name}" must not have a selection since it has no subfields.`);
  return value;
}

export function createFakeLinear(): FakeLinear {
  const keys = new Map<string, string>();
  const users = new Map<string, FakeLinearUser>();
  const teams: FakeLinearTeam[] = [];
  const issues: FakeLinearIssue[] = [];
  const calls: FakeLinear['calls'] = [];
  let clock = Date.parse('2026-01-05T09:00:00.000Z');
  const now = () => {
    clock += 60_000;
    return new Date(clock).toISOString();
  };

  const addUser = (name: string, email: string): FakeLinearUser => {
    const existing = [...users.values()].find((u) => u.email === email);
    if (existing) return existing;
    const user = { id: uuid(`user:${email}`), name, email };
    users.set(user.id, user);
    return user;
  };

  const addTeam = (key: string, name: string, description: string | null): FakeLinearTeam => {
    const states: [string, FakeLinearState['type']][] = [
      ['Backlog', 'backlog'],
      ['Todo', 'unstarted'],
      ['In Progress', 'started'],
      ['Done', 'completed'],
      ['Canceled', 'canceled'],
    ];
    const team: FakeLinearTeam = {
      id: uuid(`team:${key}`),
      key,
      name,
      description,
      states: states.map(([n, type], position) => ({ id: uuid(`state:${key}:${n}`), name: n, type, position })),
      labels: ['Bug', 'Feature'].map((l) => ({ id: uuid(`label:${key}:${l}`), name: l })),
      issueCount: 0,
    };
    teams.push(team);
    return team;
  };

  const addIssue = (team: FakeLinearTeam, fields: Partial<FakeLinearIssue> & { title: string }): FakeLinearIssue => {
    team.issueCount++;
    const at = now();
    const issue: FakeLinearIssue = {
      id: uuid(`issue:${team.key}:${team.issueCount}:${fields.title}`),
      identifier: `${team.key}-${team.issueCount}`,
      teamId: team.id,
      description: null,
      priority: 0,
      stateId: team.states.find((s) => s.type === 'unstarted')!.id,
      assigneeId: null,
      labelIds: [],
      dueDate: null,
      createdAt: at,
      updatedAt: at,
      ...fields,
    };
    issues.push(issue);
    return issue;
  };

  const ada = addUser('Ada Lovelace', 'ada@linear.example');
  const eng = addTeam('ENG', 'Engineering', 'Builds the product');
  addTeam('OPS', 'Operations', null);
  addIssue(eng, {
    title: 'Login times out on slow networks',
    description: 'Users on 3G see a timeout after 10 s.',
    priority: 2,
    stateId: eng.states.find((s) => s.type === 'started')!.id,
    assigneeId: ada.id,
    labelIds: [eng.labels[0].id],
  });
  addIssue(eng, { title: 'Dark mode for the settings page', priority: 4, labelIds: [eng.labels[1].id] });

  // ---- object views with every field a tool may select ----
  const teamOf = (id: string) => teams.find((t) => t.id === id)!;
  const connection = <T extends { id: string }>(all: T[], args: Record<string, unknown>) => {
    const first = typeof args.first === 'number' ? Math.min(args.first, 250) : 50;
    const start = typeof args.after === 'string' ? all.findIndex((n) => n.id === args.after) + 1 : 0;
    if (typeof args.after === 'string' && start === 0) throw new InputError('Invalid cursor', 'The page cursor is not valid.');
    const nodes = all.slice(start, start + first);
    return {
      nodes,
      pageInfo: {
        hasNextPage: start + first < all.length,
        hasPreviousPage: start > 0,
        startCursor: nodes[0]?.id ?? null,
        endCursor: nodes.at(-1)?.id ?? null,
      },
    };
  };
  const teamView = (t: FakeLinearTeam) => ({
    id: t.id,
    key: t.key,
    name: t.name,
    description: t.description,
    states: { nodes: t.states },
    labels: { nodes: t.labels },
  });
  const issueView = (i: FakeLinearIssue) => {
    const team = teamOf(i.teamId);
    const state = team.states.find((s) => s.id === i.stateId)!;
    return {
      id: i.id,
      identifier: i.identifier,
      title: i.title,
      description: i.description,
      priority: i.priority,
      priorityLabel: PRIORITY_LABELS[i.priority],
      url: `https://linear.app/acme/issue/${i.identifier}/${i.title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`,
      dueDate: i.dueDate,
      createdAt: i.createdAt,
      updatedAt: i.updatedAt,
      archivedAt: null,
      state: { id: state.id, name: state.name, type: state.type, position: state.position },
      assignee: i.assigneeId ? users.get(i.assigneeId)! : null,
      team: { id: team.id, key: team.key, name: team.name },
      labels: { nodes: team.labels.filter((l) => i.labelIds.includes(l.id)) },
    };
  };

  const findIssue = (id: unknown) => {
    const issue = issues.find((i) => i.id === id || i.identifier === id);
    if (!issue) throw new InputError('Entity not found: Issue', 'Could not find referenced Issue.');
    return issue;
  };

  /** IssueFilter, the comparators the tools use: team.{key,id}.eq, state.{type,name}.eq, assignee.{isMe,email}.eq. */
  function matches(issue: FakeLinearIssue, filter: unknown, me: FakeLinearUser): boolean {
    if (filter === undefined || filter === null) return true;
    const view = issueView(issue);
    for (const [key, value] of Object.entries(filter as Record<string, Record<string, { eq?: unknown }>>)) {
      for (const [field, comparator] of Object.entries(value)) {
        const eq = comparator?.eq;
        let actual: unknown;
        if (key === 'team' && (field === 'key' || field === 'id')) actual = view.team[field];
        else if (key === 'state' && (field === 'type' || field === 'name')) actual = view.state[field];
        else if (key === 'assignee' && field === 'isMe') actual = issue.assigneeId === me.id;
        else if (key === 'assignee' && field === 'email') actual = view.assignee?.email;
        else throw new ValidationError(`Field "${key}.${field}" is not defined by type "IssueFilter".`);
        if (actual !== eq) return false;
      }
    }
    return true;
  }

  function checkIssueInput(team: FakeLinearTeam, input: Record<string, unknown>) {
    if (input.stateId !== undefined && !team.states.some((s) => s.id === input.stateId)) {
      throw new InputError('Entity not found: WorkflowState', 'Could not find referenced workflow state.');
    }
    if (input.assigneeId !== undefined && input.assigneeId !== null && !users.has(String(input.assigneeId))) {
      throw new InputError('Entity not found: User', 'Could not find referenced user.');
    }
    for (const id of (input.labelIds as string[] | undefined) ?? []) {
      if (!team.labels.some((l) => l.id === id)) throw new InputError('Entity not found: IssueLabel', 'Could not find referenced label.');
    }
    if (
      input.priority !== undefined &&
      !(Number.isInteger(input.priority) && (input.priority as number) >= 0 && (input.priority as number) <= 4)
    ) {
      throw new InputError('Argument Validation Error', 'priority must be between 0 and 4.');
    }
  }

  const ISSUE_FIELDS = new Set(['title', 'description', 'priority', 'stateId', 'assigneeId', 'labelIds', 'dueDate']);

  const resolvers: Record<string, (args: Record<string, unknown>, me: FakeLinearUser) => unknown> = {
    viewer: (_args, me) => ({ ...me, active: true, admin: false }),
    teams: (args) => connection(teams.map(teamView), args),
    team: (args) => {
      const team = teams.find((t) => t.id === args.id || t.key === args.id);
      if (!team) throw new InputError('Entity not found: Team', 'Could not find referenced Team.');
      return teamView(team);
    },
    issue: (args) => issueView(findIssue(args.id)),
    issues: (args, me) => {
      const ordered = issues
        .filter((i) => matches(i, args.filter, me))
        .sort((a, b) => (args.orderBy === 'createdAt' ? b.createdAt.localeCompare(a.createdAt) : b.updatedAt.localeCompare(a.updatedAt)));
      return connection(ordered.map(issueView), args);
    },
    searchIssues: (args) => {
      if (typeof args.term !== 'string' || !args.term.trim())
        throw new ValidationError('Variable "$term" of required type "String!" was not provided.');
      const words = args.term.toLowerCase().split(/\s+/).filter(Boolean);
      const hits = issues.filter(
        (i) =>
          (args.teamId === undefined || args.teamId === null || i.teamId === args.teamId) &&
          words.every((w) => `${i.identifier} ${i.title} ${i.description ?? ''}`.toLowerCase().includes(w)),
      );
      return { ...connection(hits.map(issueView), args), totalCount: hits.length };
    },
    issueCreate: (args) => {
      const input = (args.input ?? {}) as Record<string, unknown>;
      const team = teams.find((t) => t.id === input.teamId);
      if (!team) throw new InputError('Entity not found: Team', 'Could not find referenced Team.');
      if (typeof input.title !== 'string' || !input.title) throw new InputError('Argument Validation Error', 'title must not be empty.');
      for (const key of Object.keys(input)) {
        if (key !== 'teamId' && !ISSUE_FIELDS.has(key))
          throw new ValidationError(`Field "${key}" is not defined by type "IssueCreateInput".`);
      }
      checkIssueInput(team, input);
      const issue = addIssue(team, input as Partial<FakeLinearIssue> & { title: string });
      return { success: true, lastSyncId: clock, issue: issueView(issue) };
    },
    issueUpdate: (args) => {
      const issue = findIssue(args.id);
      const input = (args.input ?? {}) as Record<string, unknown>;
      for (const key of Object.keys(input)) {
        if (!ISSUE_FIELDS.has(key)) throw new ValidationError(`Field "${key}" is not defined by type "IssueUpdateInput".`);
      }
      checkIssueInput(teamOf(issue.teamId), input);
      Object.assign(issue, input, { updatedAt: now() });
      return { success: true, lastSyncId: clock, issue: issueView(issue) };
    },
  };
  const MUTATIONS = new Set(['issueCreate', 'issueUpdate']);

  const router = express.Router();
  router.post('/graphql', (req: Request, res: Response) => {
    const userId = keys.get(req.headers.authorization ?? '');
    const me = userId ? users.get(userId) : undefined;
    const body = (req.body ?? {}) as { query?: unknown; variables?: unknown };
    if (!me) {
      calls.push({ field: '', accepted: false });
      return linearUnauthorized(res);
    }
    let fields: Field[];
    let kind: 'query' | 'mutation';
    try {
      if (typeof body.query !== 'string') throw new ValidationError('Must provide query string.');
      ({ kind, fields } = parseOperation(body.query, (body.variables ?? {}) as Record<string, unknown>));
    } catch (err) {
      return validationFailed(res, (err as Error).message);
    }
    const data: Record<string, unknown> = {};
    const errors: unknown[] = [];
    for (const field of fields) {
      calls.push({ field: field.name, accepted: true });
      const resolve = resolvers[field.name];
      if (!resolve || MUTATIONS.has(field.name) !== (kind === 'mutation')) {
        return validationFailed(res, `Cannot query field "${field.name}" on type "${kind === 'mutation' ? 'Mutation' : 'Query'}".`);
      }
      try {
        data[field.alias] = project(resolve(field.args, me), field, field.name);
      } catch (err) {
        if (err instanceof ValidationError) return validationFailed(res, err.message);
        if (!(err instanceof InputError)) throw err;
        data[field.alias] = null;
        errors.push({
          message: err.message,
          path: [field.alias],
          extensions: {
            type: 'invalid input',
            code: 'INPUT_ERROR',
            statusCode: 400,
            userError: true,
            userPresentableMessage: err.presentable,
          },
        });
      }
    }
    res.json(errors.length ? { data, errors } : { data });
  });
  router.all('/graphql', (_req: Request, res: Response) => validationFailed(res, 'GET query must be sent with a POST request.'));

  return {
    keys,
    users,
    teams,
    issues,
    calls,
    router,
    grantKey(key, user) {
      const u = addUser(user.name, user.email);
      keys.set(key, u.id);
      return u;
    },
  };
}

function validationFailed(res: Response, message: string) {
  res.status(400).json({
    errors: [{ message, extensions: { type: 'graphql error', code: 'GRAPHQL_VALIDATION_FAILED', statusCode: 400, userError: false } }],
  });
}
