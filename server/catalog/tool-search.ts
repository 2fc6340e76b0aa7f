import MiniSearch from 'minisearch';
import type { ToolEntry } from '../../providers/registry.js';
import {
  INTENT_PHRASES,
  INTENT_WORDS,
  KEEP_AS_TEXT,
  LIGHT_VERBS,
  NAME_ALIASES,
  NAME_OPERATIONS,
  type Operation,
  PRODUCT_WORDS,
  REWRITES,
} from './search-vocabulary.js';

/**
 * Deterministic keyword ranking of tools for a request. Three parts, added:
 * - text: BM25+ (minisearch) of the request's subject words over the tool's name, description and
 *   integration text, scaled so the best match scores 1;
 * - operation: what the request asks done ("file", "reply", "details", "which", "who am I") against
 *   what the tool's name says it does (create, comment, get, list, whoami…);
 * - integration: the request's product words ("ticket", "channel", "repo") or the integration's own
 *   name, pointing at one integration.
 * Names split on `_` and camelCase; a few synonyms and plural forms fold together. Same query, same
 * catalog, same order: ties go to the caller's connected integrations, then by qualified name.
 */

export const WEIGHTS = { text: 1, operation: 1.2, integration: 1.2 };

const SYNONYMS: Record<string, string[]> = {
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
};

const STOP_WORDS = new Set(
  (
    'a an the of to for in on and or my me all with by as is am are was were be it its this that these those i you we ' +
    'do does did have has there can could would should please what which who how whats at from into about against ' +
    'across up out some any one our your their them us so just now'
  ).split(' '),
);

/** Plural and simple verb endings off, so "issues" meets "issue". */
function stem(term: string): string {
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

interface ToolDocument {
  id: string;
  qualifiedName: string;
  toolName: string;
  description: string;
  providerText: string;
}

/** Why a hit scored what it did (SEARCH_DEBUG=1 logs these). */
export interface ScoreParts {
  text: number;
  operation: number;
  integration: number;
  connected: boolean;
}

export interface ToolSearchHit {
  entry: ToolEntry;
  score: number;
  parts: ScoreParts;
}

type Weighted = Partial<Record<Operation, number>>;

/** What a request asks: its subject words, the operations it means, the integrations it names. */
export interface ReadRequest {
  text: string;
  operations: Weighted;
  integrations: Map<string, number>;
}

/** An integration named outright outweighs one its product words suggest. */
const NAMED = 1.5;

const scale = (ops: Weighted, by: number): Weighted => Object.fromEntries(Object.entries(ops).map(([op, w]) => [op, w * by])) as Weighted;

const addMax = <K>(map: Map<K, number>, key: K, weight: number) => map.set(key, Math.max(map.get(key) ?? 0, weight));

function addOperations(into: Weighted, from: Weighted) {
  for (const [op, w] of Object.entries(from) as [Operation, number][]) into[op] = Math.max(into[op] ?? 0, w);
}

/** A tool's operations from its name: the first operation word counts fully, later ones half. */
function nameOperations(toolName: string): Weighted {
  const ops: Weighted = {};
  const words = tokenize(toolName).map((w) => w.toLowerCase());
  let first = true;
  let light = false;
  for (const [i, word] of words.entries()) {
    const op = NAME_OPERATIONS[word];
    if (!op) continue;
    // A light verb ("add", "submit") gives the main operation to the noun after it.
    const main = first || light;
    light = i === 0 && LIGHT_VERBS.has(word) && words.slice(1).some((w) => NAME_OPERATIONS[w]);
    ops[op] = Math.max(ops[op] ?? 0, light ? 0.6 : main ? 1 : 0.5);
    first = false;
  }
  return ops;
}

export class ToolSearchIndex {
  private readonly search: MiniSearch<ToolDocument>;
  private readonly byId = new Map<string, ToolEntry>();
  private readonly operationsOf = new Map<string, Weighted>();
  private readonly byProvider = new Map<string, ToolEntry[]>();
  /** An integration's own words (name, display name, tool prefix) → its name. */
  private readonly providerWords = new Map<string, string>();
  private readonly providerPhrases: [string, string][] = [];

  constructor(entries: readonly ToolEntry[]) {
    this.search = new MiniSearch<ToolDocument>({
      fields: ['qualifiedName', 'toolName', 'description', 'providerText'],
      storeFields: [],
      tokenize,
      processTerm: (term) => {
        const terms = normalizeTerm(term);
        return terms.length ? terms : null;
      },
      searchOptions: {
        boost: { toolName: 3, qualifiedName: 1, providerText: 1.5, description: 1 },
        prefix: (term) => term.length >= 4,
        fuzzy: (term) => (term.length >= 8 ? 0.15 : false),
        combineWith: 'OR',
      },
    });
    const docs = entries.map((entry) => {
      this.byId.set(entry.qualifiedName, entry);
      this.operationsOf.set(entry.qualifiedName, nameOperations(entry.tool.name));
      const m = entry.provider.manifest;
      if (!this.byProvider.has(m.name)) {
        this.byProvider.set(m.name, []);
        for (const word of [m.name, m.toolPrefix, ...m.name.split('-'), m.displayName.replace(/\s+/g, '')]) {
          const lower = word.toLowerCase();
          // First come keeps a word: built-ins are listed before upstream servers, so a server that
          // calls itself "GitHub" cannot take GitHub's requests.
          if (lower.length >= 3 && !STOP_WORDS.has(lower) && !this.providerWords.has(lower)) this.providerWords.set(lower, m.name);
        }
        const phrase = m.displayName.toLowerCase();
        if (/\s/.test(phrase) && !this.providerPhrases.some(([known]) => known === phrase)) this.providerPhrases.push([phrase, m.name]);
      }
      this.byProvider.get(m.name)?.push(entry);
      return {
        id: entry.qualifiedName,
        qualifiedName: entry.qualifiedName,
        toolName: entry.tool.name,
        description: entry.tool.description,
        providerText: `${m.name} ${m.displayName} ${m.toolPrefix} ${m.description}`,
      };
    });
    this.search.addAll(docs);
  }

  /** Reads a request into subject words, operations and integrations. */
  read(original: string): ReadRequest {
    let request = original;
    for (const [pattern, replacement] of REWRITES) request = request.replace(pattern, replacement);
    const lower = request.toLowerCase();
    const operations: Weighted = {};
    const integrations = new Map<string, number>();
    for (const [pattern, ops] of INTENT_PHRASES) if (pattern.test(lower)) addOperations(operations, ops);
    for (const [phrase, name] of this.providerPhrases) if (lower.includes(phrase)) addMax(integrations, name, NAMED);
    // Things only one integration has: a Slack "#channel", a web address, a GitHub "owner/repo" or path.
    if (/(^|\s)#[a-z]/.test(lower)) addMax(integrations, 'slack', 1);
    if (/(^|\s)@\w/.test(lower)) addMax(integrations, 'slack', 0.4);
    if (/(^|\s):[a-z0-9_+-]+:/.test(lower)) addMax(integrations, 'slack', 0.6);
    if (/(^|\s)\.[a-z][\w-]*/.test(lower)) addMax(integrations, 'browser', 0.8);
    if (/https?:\/\/|\bwww\.|\b[a-z0-9-]+\.(com|org|net|io|dev)\b/.test(lower)) addMax(integrations, 'browser', 1);
    else if (/\b[\w.-]+\/[\w.-]+\b/.test(lower)) addMax(integrations, 'github', 0.6);
    const identifier = /\b[A-Z][A-Z0-9]+-\d+\b/.test(request);
    if (identifier) {
      addMax(integrations, 'atlassian-jira', 0.4);
      addMax(integrations, 'linear', 0.3);
    }
    // A number or id names one thing: "issue #42", "note 7", "PROJ-9".
    const subject: string[] = [];
    let intentSeen = false;
    let plural = false;
    // Issue keys, owner/repo, addresses, #channels and "in the repo" say which thing or where, not
    // what kind: they are no text to match. A file's path is a file.
    const subjectText = request
      .replace(/https?:\/\/\S+|\bwww\.\S+|\b[a-z0-9-]+\.(?:com|org|net|io|dev)\b/gi, ' ')
      .replace(/(?:^|\s)[\w/.-]*\.(?:md|ts|js|json|ya?ml|py|go|rs|txt|toml|lock)\b/gi, ' file ')
      .replace(/\b[\w.-]+\/[\w.-]+/g, ' ')
      .replace(/\b[A-Z][A-Z0-9]+-\d+\b|(?:^|\s)[#@][\w-]+/g, ' ')
      .replace(
        /\b(?:in|on|from|to|against) (?:the |this |that |my |a )?(?:[A-Z]+ )?(?:repo|repository|project|channel|workspace)\b/gi,
        ' ',
      );
    // Product words count wherever they stand, "in the repo" too.
    for (const raw of tokenize(request)) {
      const word = raw.toLowerCase();
      const own = this.providerWords.get(word) ?? NAME_ALIASES[word];
      if (own) addMax(integrations, own, NAMED);
      for (const term of new Set([word, stem(word), ...normalizeTerm(word)])) {
        for (const [name, weight] of Object.entries(PRODUCT_WORDS[term] ?? {})) addMax(integrations, name, weight);
      }
    }
    const words = tokenize(subjectText);
    for (const [position, raw] of words.entries()) {
      const word = raw.toLowerCase();
      const intent = INTENT_WORDS[word];
      // The first intent word is the request's verb; later ones are often its object ("a task to update the docs").
      if (intent) addOperations(operations, intentSeen ? scale(intent, 0.7) : intent);
      intentSeen ||= Boolean(intent);
      const own = this.providerWords.get(word) ?? NAME_ALIASES[word];
      // A request's first word, when an intent, is its verb ("file a bug", "log a task"), not its subject.
      if (own || /^\d+$/.test(word) || (intent && (position === 0 || !KEEP_AS_TEXT.has(word)))) continue;
      if (word.length > 3 && stem(word) !== word && !STOP_WORDS.has(word)) plural = true;
      subject.push(raw);
    }
    // "repos", "issues": many things are asked for.
    if (plural) addOperations(operations, { list: 0.7 });
    // A number or id names one thing: "issue #42", "note 7", "PROJ-9". It adds to what the words ask.
    if (identifier || /(^|\s)#?\d+\b|\bid\b/.test(lower)) operations.get = (operations.get ?? 0) + 0.4;
    // A request of intent words alone ("screenshot", "delete") is its own subject.
    return { text: subject.length ? subject.join(' ') : words.join(' '), operations, integrations };
  }

  /** Ranked hits that pass `filter`, best first, at most `limit`; `connected` breaks ties. */
  query(
    text: string,
    options: { limit: number; filter?: (entry: ToolEntry) => boolean; connected?: (entry: ToolEntry) => boolean },
  ): ToolSearchHit[] {
    const request = this.read(text);
    const textScores = new Map<string, number>();
    let best = 0;
    if (request.text) {
      for (const result of this.search.search(request.text)) {
        textScores.set(String(result.id), result.score);
        best = Math.max(best, result.score);
      }
    }
    // A tool of a named integration that does what is asked is a candidate without a word in common.
    const candidates = new Set(textScores.keys());
    for (const name of request.integrations.keys())
      for (const entry of this.byProvider.get(name) ?? []) candidates.add(entry.qualifiedName);
    const hits: ToolSearchHit[] = [];
    for (const id of candidates) {
      const entry = this.byId.get(id);
      if (!entry || (options.filter && !options.filter(entry))) continue;
      const parts: ScoreParts = {
        text: best > 0 ? (textScores.get(id) ?? 0) / best : 0,
        operation: operationMatch(this.operationsOf.get(id) ?? {}, request.operations),
        integration: request.integrations.get(entry.provider.manifest.name) ?? 0,
        connected: options.connected?.(entry) ?? false,
      };
      if (parts.text === 0 && parts.operation === 0) continue;
      const score = WEIGHTS.text * parts.text + WEIGHTS.operation * parts.operation + WEIGHTS.integration * parts.integration;
      // Rounded so that float noise cannot decide an order the tie-break should.
      hits.push({ entry, score: Math.round(score * 1e6) / 1e6, parts });
    }
    hits.sort(
      (a, b) =>
        b.score - a.score ||
        Number(b.parts.connected) - Number(a.parts.connected) ||
        a.entry.qualifiedName.localeCompare(b.entry.qualifiedName),
    );
    return hits.slice(0, options.limit);
  }
}

/**
 * Operations that answer other requests in part: Jira lists by searching, and where an integration
 * has no assign or transition tool its update tool assigns and moves.
 */
const PARTLY: Partial<Record<Operation, [Operation, number][]>> = {
  list: [['search', 0.6]],
  search: [['list', 0.5]],
  update: [
    ['assign', 0.6],
    ['transition', 0.6],
  ],
};

/** Each of the tool's operations scores what the request asked of it (or of its near kin). */
function operationMatch(tool: Weighted, asked: Weighted): number {
  let sum = 0;
  for (const [op, w] of Object.entries(tool) as [Operation, number][]) {
    let best = asked[op] ?? 0;
    for (const [other, share] of PARTLY[op] ?? []) best = Math.max(best, (asked[other] ?? 0) * share);
    sum += w * best;
  }
  return sum;
}

const indexes = new WeakMap<object, { index: ToolSearchIndex; version: number }>();

/** One index per registry, built again when listed (upstream) tools change. */
export function toolIndexFor(registry: { tools(): ToolEntry[]; catalogVersion?(): number }): ToolSearchIndex {
  const version = registry.catalogVersion?.() ?? 0;
  let built = indexes.get(registry);
  if (!built || built.version !== version) {
    built = { index: new ToolSearchIndex(registry.tools()), version };
    indexes.set(registry, built);
  }
  return built.index;
}
