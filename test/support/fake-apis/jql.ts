/**
 * A small JQL subset for the fake Jira: clauses joined by AND, with =, !=, ~, IN, NOT IN,
 * IS EMPTY and IS NOT EMPTY, currentUser(), and a trailing ORDER BY. Enough to tell a real
 * query from nonsense the way Jira does (400 with errorMessages).
 */

export interface JqlIssueView {
  key: string;
  project: string;
  summary: string;
  description: string;
  status: string;
  statusCategory: string;
  assignee: string | null;
  reporter: string | null;
  issuetype: string;
  priority: string;
  labels: string[];
  created: string;
  updated: string;
}

export class JqlError extends Error {}

const FIELDS: Record<string, keyof JqlIssueView | 'text'> = {
  project: 'project',
  key: 'key',
  issuekey: 'key',
  summary: 'summary',
  description: 'description',
  text: 'text',
  status: 'status',
  statuscategory: 'statusCategory',
  assignee: 'assignee',
  reporter: 'reporter',
  issuetype: 'issuetype',
  type: 'issuetype',
  priority: 'priority',
  labels: 'labels',
  created: 'created',
  updated: 'updated',
};

const unquote = (v: string) => v.trim().replace(/^"(.*)"$|^'(.*)'$/, '$1$2');

/** A predicate and a comparator for `jql`, evaluated for the user `me` (an accountId). */
export function compileJql(jql: string, me: string): { test(i: JqlIssueView): boolean; compare(a: JqlIssueView, b: JqlIssueView): number } {
  const [where, orderBy] = jql.split(/\border\s+by\b/i);
  const clauses = where.trim() ? where.split(/\s+and\s+/i) : [];
  if (!clauses.length) throw new JqlError('Unbounded JQL queries are not allowed here. Please add a search restriction to your query.');
  if (/\s+or\s+/i.test(where)) throw new JqlError('The fake Jira supports AND-joined clauses only.');

  const tests = clauses.map((clause) => {
    const m = /^\s*(\w+)\s*(!=|=|~|not\s+in|in|is\s+not|is)\s*(.+?)\s*$/i.exec(clause);
    if (!m) throw new JqlError(`Error in the JQL Query: unable to parse "${clause.trim()}".`);
    const field = FIELDS[m[1].toLowerCase()];
    if (!field) throw new JqlError(`Field '${m[1]}' does not exist or you do not have permission to view it.`);
    const op = m[2].toLowerCase().replace(/\s+/g, ' ');
    const resolve = (v: string) => (/^currentuser\(\)$/i.test(v.trim()) ? me : unquote(v).toLowerCase());
    const values = /^\(.*\)$/.test(m[3].trim()) ? m[3].trim().slice(1, -1).split(',').map(resolve) : [resolve(m[3])];
    const valuesOf = (i: JqlIssueView): string[] => {
      if (field === 'text') return [`${i.summary}\n${i.description}`.toLowerCase()];
      const v = i[field];
      return (Array.isArray(v) ? v : [v]).filter((x): x is string => x !== null).map((x) => x.toLowerCase());
    };
    return (i: JqlIssueView) => {
      const actual = valuesOf(i);
      if (op === 'is') return actual.length === 0;
      if (op === 'is not') return actual.length > 0;
      if (op === '~') return actual.some((a) => values.every((v) => a.includes(v)));
      const hit = actual.some((a) => values.includes(a));
      return op === '=' || op === 'in' ? hit : !hit;
    };
  });

  const order = orderBy
    ?.split(',')
    .map((part) => part.trim().split(/\s+/))
    .filter(([f]) => f)
    .map(([f, dir]) => {
      const field = FIELDS[f.toLowerCase()];
      if (!field || field === 'text') throw new JqlError(`Field '${f}' does not exist or you do not have permission to view it.`);
      return { field, sign: dir?.toLowerCase() === 'asc' ? 1 : -1 };
    });

  return {
    test: (i) => tests.every((t) => t(i)),
    compare(a, b) {
      for (const { field, sign } of order ?? [{ field: 'created' as const, sign: -1 }]) {
        const [x, y] = [String(a[field] ?? ''), String(b[field] ?? '')];
        if (x !== y) return x < y ? -sign : sign;
      }
      return 0;
    },
  };
}
