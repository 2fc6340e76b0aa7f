/**
 * How request and catalog text become search terms: words split at punctuation and camelCase,
 * lower-cased, plural endings off, a few synonyms folded together, common words dropped. The same
 * reading for the catalog (when indexing) and for requests, so that "PRs" meets `pull_request`.
 */

/**
 * A table looked up by request words: no inherited keys, so that "constructor" or "__proto__" in a
 * request (or a tool's description) is just a word.
 */
export function wordTable<T>(entries: Record<string, T>): Readonly<Record<string, T>> {
  return Object.freeze(Object.assign(Object.create(null) as Record<string, T>, entries));
}

const SYNONYMS = wordTable<string[]>({
  pr: ['pull', 'request'],
  prs: ['pull', 'request'],
  msg: ['message'],
  ticket: ['issue'],
  repository: ['repo'],
  dm: ['direct', 'message'],
  bug: ['issue'],
  post: ['message'],
  task: ['issue'],
  space: ['project'],
  committed: ['commit'],
  backlog: ['issue'],
  member: ['user'],
  person: ['user'],
  people: ['user'],
  codebase: ['code'],
  folder: ['directory'],
  conversation: ['message'],
  chatter: ['message'],
  picture: ['image'],
  tiny: ['small'],
  discussion: ['message'],
  liked: ['upvoted'],
  plus: ['sum'],
  addition: ['sum'],
  repeat: ['echo'],
  verbatim: ['echo'],
  unchanged: ['echo'],
  parrot: ['echo'],
  fake: ['simulated'],
  compress: ['gzip', 'compress'],
  slow: ['long'],
  calculate: ['sum'],
  compute: ['sum'],
  lengthy: ['long'],
  // MCP calls a resource returned inside a result an embedded resource; tools call it a reference.
  embed: ['reference', 'embed'],
  embedded: ['reference', 'embedded'],
  mock: ['simulated'],
});

export const STOP_WORDS = new Set(
  (
    'a an the of to for in on and or my me all with by as is am are was were be it its this that these those i you we ' +
    'do does did have has there can could would should please what which who how whats at from into about against ' +
    'across up out some any one our your their them us so just now want need like help also really via using kindly quickly go'
  ).split(' '),
);

/** Plural and simple verb endings off, so "issues" meets "issue". */
export function stem(term: string): string {
  if (term.length > 5 && (term.endsWith('uses') || term.endsWith('sses'))) return term.slice(0, -2);
  if (term.length > 4 && term.endsWith('ies')) return `${term.slice(0, -3)}y`;
  if (term.length > 3 && term.endsWith('s') && !term.endsWith('ss') && !term.endsWith('us')) return term.slice(0, -1);
  return term;
}

export function normalizeTerm(raw: string): string[] {
  const lower = raw.toLowerCase();
  // Short plurals of abbreviations ("PRs", "msgs") are too short for the stemmer.
  const term = lower.endsWith('s') && SYNONYMS[lower.slice(0, -1)] ? lower.slice(0, -1) : stem(lower);
  if (!term || STOP_WORDS.has(term)) return [];
  return SYNONYMS[term] ?? [term];
}

/** Splits on anything not a letter or digit, and at camelCase humps. */
export function tokenize(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
}

/**
 * A word's base, for a request word the catalog does not have in that form: "noted" → "note",
 * "stopped" → "stop", else the bare stem matched as a prefix ("simulation" → "simulat…").
 */
export function baseForm(term: string, known: ReadonlySet<string>): string | undefined {
  for (const suffix of ['ations', 'ation', 'ions', 'ion', 'ings', 'ing', 'ments', 'ment', 'ed']) {
    if (!term.endsWith(suffix) || term.length - suffix.length < 3) continue;
    const base = term.slice(0, -suffix.length);
    const candidates = [`${base}e`, base, base.at(-1) === base.at(-2) ? base.slice(0, -1) : base];
    return candidates.find((c) => known.has(c)) ?? (base.length >= 4 ? base : undefined);
  }
  return undefined;
}
