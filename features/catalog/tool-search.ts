import MiniSearch from 'minisearch';
import { inputJsonSchema } from '../../core/json-schema.js';
import type { ToolEntry } from '../../providers/registry.js';
import { CatalogRanker } from './catalog-ranker.js';
import { baseForm, normalizeTerm, STOP_WORDS, stem, tokenize } from './search-terms.js';
import {
  CONTENT_CLAUSE,
  CSS_CLASS,
  DESCRIBING_WORDS,
  INTENT_PHRASES,
  INTENT_WORDS,
  KEEP_AS_TEXT,
  LIGHT_VERBS,
  NAME_ALIASES,
  NAME_OPERATIONS,
  NOUNS_FIRST,
  type Operation,
  PRODUCT_WORDS,
  REWRITES,
  TOPIC_CLAUSE,
} from './search-vocabulary.js';

/**
 * Deterministic keyword ranking of tools for a request. Four parts, added:
 * - text: BM25+ (minisearch) of the request's subject words over the tool's name, description,
 *   integration text and parameters (names and descriptions), scaled so the best match scores 1;
 * - catalog: BM25F from the catalog alone (catalog-ranker.ts: field weights, Porter stems,
 *   boilerplate damped, learned related words), the same for every source, best match 1;
 * - operation: what the request asks done ("file", "reply", "details", "which", "who am I") against
 *   what the tool's name says it does (create, comment, get, list, whoami…, or its own first word:
 *   `echo`, `gzip_…`), kept in proportion to how relevant the tool is otherwise (GATE);
 * - integration: the request's product words ("ticket", "channel", "repo") or the integration's own
 *   name, pointing at one integration — and as much at its peers (`github-mcp` beside `github`,
 *   Playwright's `browser_…` beside `browser`: findPeers), so the better-matching tool wins whichever
 *   source it comes from; a learned related word that is an integration's name points at it too.
 * Words are read as search-terms.ts says; what request words mean is in search-vocabulary.ts. Same
 * query, same catalog, same order: ties go to the caller's connected integrations, then by name.
 */

export const WEIGHTS = { text: 1, catalog: 0.3, operation: 1.2, integration: 1.2 };

/**
 * How much of its operation score a tool keeps, by how relevant it is otherwise: a tool that shares
 * no subject word with the request and belongs to no integration it points at does what is asked
 * to something else ("change" in "climate change" is no request to update an issue). The share is
 * `floor + text × GATE.text + integration × GATE.integration`, at most 1: all of it from about a
 * third of the best text match, or an integration named or pointed at by a product word.
 */
export const GATE = { floor: 0.3, text: 2, integration: 0.7 };

interface ToolDocument {
  id: string;
  qualifiedName: string;
  toolName: string;
  description: string;
  providerText: string;
  parameters: string;
}

/** Why a hit scored what it did (SEARCH_DEBUG=1 logs these). */
export interface ScoreParts {
  text: number;
  /** BM25F over the tool's fields with learned related words (catalog-ranker), the best scaled to 1. */
  catalog: number;
  /** What the tool's operations match of the request's, times `gate`. */
  operation: number;
  integration: number;
  /** The share of its operation match the tool keeps (GATE). */
  gate: number;
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
  /** Every word of the request as typed, stemmed and folded: a tool's own verb is looked up here. */
  words: Set<string>;
  /** Things asked for in the plural ("issues", "PRs"): tools named after one of them are asked to list. */
  many: Set<string>;
}

/** Arguments' names and descriptions say what a tool works on, less surely than its name and description. */
const PARAMETERS_BOOST = 0.5;
/** How much of a listing tool's description is read for the things it names in the plural. */
const DESCRIPTION_PLURALS_MAX_CHARS = 600;
/** Request characters read: search_tools' own limit. */
export const QUERY_MAX_CHARS = 200;
/** An upstream schema may be 64 KiB: its words are read up to here. */
const PARAMETERS_MAX_CHARS = 1000;

/** An integration named outright outweighs one its product words suggest. */
const NAMED = 1.5;
/** What a plural of the thing a tool is named after asks of it: to list. */
const PLURAL_LIST = 0.7;

const QUESTION_WORDS = new Set(['what', 'whats', 'which']);
/** Operations that read: a verb of these leaves a number or plural its usual sense. */
const READING: Operation[] = ['get', 'list', 'search'];

/**
 * Everyday words that integrations are also named (the reference MCP servers are called
 * "everything", "memory", "time", "fetch"): such a word names its integration only when used as a
 * name ("Everything", "the everything server", "on everything"), not in "everything I noted".
 */
const EVERYDAY_NAMES = new Set(['everything', 'anything', 'something', 'nothing', 'memory', 'time', 'fetch']);

function usedAsName(raw: string, request: string): boolean {
  if (/^[A-Z]/.test(raw)) return true;
  const word = raw.toLowerCase().replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(
    `\\b(?:on|in|from|via|using|through|with|at) (?:the )?${word}\\b|\\b${word} (?:mcp |upstream )?(?:server|mcp|integration|tools?|app|api)\\b`,
    'i',
  ).test(request);
}

/** The share of its weight a product word keeps inside a web address. */
const IN_ADDRESS = 0.4;

const WEB_ADDRESS = /https?:\/\/|\bwww\.|\b[a-z0-9-]+\.(com|org|net|io|dev)\b/;
/** "acme/web", "octocat/hello-world": a GitHub owner and repository, whose words are names. */
const OWNER_REPO = /\b[\w.-]+\/[\w.-]+/g;
const WEB_ADDRESS_TEXT = /https?:\/\/\S+|\bwww\.\S+|\b[\w.-]+\.(?:com|org|net|io|dev)\b\S*/g;

/** A request word's intent: as written, or its -ing form's verb ("sending" → send). */
function intentOf(word: string): Weighted | undefined {
  const intent = INTENT_WORDS[word];
  if (intent || word.length < 6 || !word.endsWith('ing')) return intent;
  const base = word.slice(0, -3);
  return INTENT_WORDS[base] ?? INTENT_WORDS[`${base}e`] ?? (base.at(-1) === base.at(-2) ? INTENT_WORDS[base.slice(0, -1)] : undefined);
}

const scale = (ops: Weighted, by: number): Weighted => Object.fromEntries(Object.entries(ops).map(([op, w]) => [op, w * by])) as Weighted;

const addMax = <K>(map: Map<K, number>, key: K, weight: number) => map.set(key, Math.max(map.get(key) ?? 0, weight));

function addOperations(into: Weighted, from: Weighted) {
  for (const [op, w] of Object.entries(from) as [Operation, number][]) into[op] = Math.max(into[op] ?? 0, w);
}

/**
 * A tool's own verb: the first word of its name when that is no operation word (`echo`, `toggle_…`,
 * `gzip_file`, `simulate_…`). A request that uses it asks for what the tool does. Counts fully when
 * the name says no operation otherwise, half when it does (`simulate_research_query` also "queries").
 */
function ownVerb(toolName: string, ops: Weighted, ownWords: Set<string>): { verb: string; weight: number } | undefined {
  const first = tokenize(toolName)[0]?.toLowerCase();
  if (!first || first.length < 3 || NAME_OPERATIONS[first] || STOP_WORDS.has(first) || ownWords.has(first)) return undefined;
  return { verb: stem(first), weight: Object.keys(ops).length ? 0.5 : 1 };
}

/** A tool's operations from its name: the first operation word counts fully, later ones half. */
function nameOperations(toolName: string): Weighted {
  const ops: Weighted = {};
  const words = tokenize(toolName).map((w) => w.toLowerCase());
  let first = true;
  let light = false;
  for (const [i, word] of words.entries()) {
    // A plural names the same operation ("list_transitions" also says "transition").
    const op = NAME_OPERATIONS[word] ?? NAME_OPERATIONS[stem(word)];
    if (!op) continue;
    // A light verb ("add", "submit") gives the main operation to the noun after it.
    const main = first || light;
    light = i === 0 && LIGHT_VERBS.has(word) && words.slice(1).some((w) => NAME_OPERATIONS[w]);
    // Who the connection is (`get_authenticated_user`) is what such a tool is for, wherever the word stands.
    ops[op] = Math.max(ops[op] ?? 0, light ? 0.6 : main || op === 'whoami' ? 1 : 0.5);
    first = false;
  }
  return ops;
}

/** The parts of the ranking that issue 30 added, each on unless turned off (the benchmark's ablation turns them off). */
export interface IndexParts {
  /** BM25F over the tool's fields with learned related words (catalog-ranker.ts) beside the text score. */
  catalogText?: boolean;
  /** A request pointed at an integration points at its peers as much (findPeers). */
  peers?: boolean;
  /** A learned related word that is an integration's own name points at it. */
  relatedNames?: boolean;
}

/**
 * Things only one integration has — a Slack "#channel", a web address, a GitHub "owner/repo" or
 * path, an issue key — point at it (into `integrations`). Whether the request has an issue key ("PROJ-9").
 */
function readPointers(request: string, lower: string, operations: Weighted, integrations: Map<string, number>): boolean {
  if (/(^|\s)#[a-z]/.test(lower)) addMax(integrations, 'slack', 1);
  if (/(^|\s)@\w/.test(lower)) addMax(integrations, 'slack', 0.4);
  if (/(^|\s):[a-z0-9_+-]+:/.test(lower)) addMax(integrations, 'slack', 0.6);
  if (CSS_CLASS.test(lower)) addMax(integrations, 'browser', 0.8);
  // A web address is a page to open ("read the article at https://…").
  if (WEB_ADDRESS.test(lower)) {
    addMax(integrations, 'browser', 1);
    addOperations(operations, { open: 0.6 });
  } else if (/\b[\w.-]+\/[\w.-]+\b/.test(lower)) addMax(integrations, 'github', 0.6);
  // GitHub numbers its issues and pull requests; Jira and Linear have keys ("PROJ-9").
  if (/\b(?:issue|pr|pull request)s? #?\d+\b/.test(lower)) addMax(integrations, 'github', 0.5);
  // "acme/web#312": GitHub's own way to name an issue or pull request.
  if (/\b[\w.-]+\/[\w.-]+#\d+\b/.test(lower)) addMax(integrations, 'github', 1);
  const identifier = /\b[A-Z][A-Z0-9]+-\d+\b/.test(request);
  if (identifier) {
    addMax(integrations, 'atlassian-jira', 0.6);
    addMax(integrations, 'linear', 0.45);
  }
  return identifier;
}

export class ToolSearchIndex {
  private readonly search: MiniSearch<ToolDocument>;
  private readonly byId = new Map<string, ToolEntry>();
  private readonly operationsOf = new Map<string, Weighted>();
  private readonly ownVerbs = new Map<string, { verb: string; weight: number }>();
  private readonly ownVerbSet = new Set<string>();
  /** Nouns of tool names (`issue`, `channel`, `note`): a plural of one asks for many of them. */
  private readonly nameNouns = new Set<string>();
  private readonly nounsOf = new Map<string, Set<string>>();
  private readonly listsBySearching = new Set<string>();
  private readonly byProvider = new Map<string, ToolEntry[]>();
  /** An integration's own words (name, display name, tool prefix) → its name. */
  private readonly providerWords = new Map<string, string>();
  /**
   * The words of integrations' unique names ("github-mcp" → github, mcp) → every integration named
   * with them: the operator chose the name, so "on GitHub" names both GitHub and GitHub MCP, and
   * the better match of the two wins.
   */
  private readonly sharedNameWords = new Map<string, string[]>();
  private readonly providerPhrases: [string, string][] = [];
  /** Every term the catalog's text has, so a request's word in another form can be read as its base. */
  private readonly vocabulary = new Set<string>();
  private readonly productWordSet = new Set(Object.keys(PRODUCT_WORDS));

  private readonly catalog: CatalogRanker;
  /** Integration → integrations of the same kind (findPeers). */
  private readonly peers = new Map<string, string[]>();

  private readonly parts: Required<IndexParts>;

  constructor(entries: readonly ToolEntry[], parts: IndexParts = {}) {
    this.parts = { catalogText: true, peers: true, relatedNames: true, ...parts };
    this.catalog = new CatalogRanker(entries);
    this.search = new MiniSearch<ToolDocument>({
      fields: ['qualifiedName', 'toolName', 'description', 'providerText', 'parameters'],
      storeFields: [],
      tokenize,
      processTerm: (term) => {
        const terms = normalizeTerm(term);
        for (const t of terms) this.vocabulary.add(t);
        return terms.length ? terms : null;
      },
      searchOptions: {
        processTerm: (term) => {
          const terms = normalizeTerm(term).map((t) => (this.vocabulary.has(t) ? t : (baseForm(t, this.vocabulary) ?? t)));
          return terms.length ? terms : null;
        },
        boost: { toolName: 3, qualifiedName: 1, description: 1, providerText: 1.5, parameters: PARAMETERS_BOOST },
        prefix: (term) => term.length >= 4,
        fuzzy: (term) => (term.length >= 8 ? 0.15 : false),
        combineWith: 'OR',
      },
    });
    const docs = entries.map((entry) => {
      this.byId.set(entry.qualifiedName, entry);
      const ops = nameOperations(entry.tool.name);
      this.operationsOf.set(entry.qualifiedName, ops);
      const m = entry.provider.manifest;
      const own = ownVerb(entry.tool.name, ops, new Set([m.name, m.toolPrefix, ...m.name.split('-')]));
      if (own) {
        this.ownVerbs.set(entry.qualifiedName, own);
        this.ownVerbSet.add(own.verb);
      }
      const nouns = new Set<string>();
      for (const word of tokenize(entry.tool.name)) {
        const lower = word.toLowerCase();
        if (NAME_OPERATIONS[lower] || STOP_WORDS.has(lower)) continue;
        for (const noun of [stem(lower), ...normalizeTerm(lower)]) {
          nouns.add(noun);
          this.nameNouns.add(noun);
        }
      }
      this.nounsOf.set(entry.qualifiedName, nouns);
      if (!this.byProvider.has(m.name)) {
        this.byProvider.set(m.name, []);
        for (const word of [m.name, m.toolPrefix, ...m.name.split('-'), m.displayName.replace(/\s+/g, '')]) {
          const lower = word.toLowerCase();
          // First come keeps a word: built-ins are listed before upstream servers, so a server that
          // calls itself "GitHub" cannot take GitHub's requests.
          if (lower.length >= 3 && !STOP_WORDS.has(lower) && !this.providerWords.has(lower)) this.providerWords.set(lower, m.name);
        }
        for (const word of new Set(m.name.split('-')))
          if (word.length >= 3 && !STOP_WORDS.has(word))
            this.sharedNameWords.set(word, [...(this.sharedNameWords.get(word) ?? []), m.name]);
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
        parameters: parametersText(entry),
      };
    });
    this.search.addAll(docs);
    for (const entries of this.byProvider.values()) this.findListsBySearching(entries);
    this.findPeers();
  }

  /**
   * Integrations of the same kind as another, read off the catalog: one whose name, display name or
   * most tool names carry the other's own first name word (`github-mcp` and `github`, Playwright's
   * `browser_click`… and `browser`). A request pointed at one by its things ("PR 88", "the page")
   * points at its peers as much, so the better-matching tool wins whichever source it comes from.
   */
  private findPeers() {
    for (const name of this.byProvider.keys()) {
      const word = name.split('-')[0];
      if (word.length < 3) continue;
      for (const [other, others] of this.byProvider) {
        if (other === name) continue;
        const m = others[0].provider.manifest;
        const own = new Set(tokenize(`${m.name} ${m.displayName}`).map((w) => w.toLowerCase()));
        const inNames = others.filter((e) => tokenize(e.tool.name).some((w) => w.toLowerCase() === word)).length;
        if (own.has(word) || inNames * 2 >= others.length) this.peers.set(name, [...(this.peers.get(name) ?? []), other]);
      }
    }
  }

  /**
   * A search tool whose integration has no tool listing its things lists them (Jira's
   * `search_issues`; not Slack's `search_messages`, whose messages `get_channel_history` lists). A
   * tool lists the things its name names, or names in the plural in its description.
   */
  private findListsBySearching(entries: readonly ToolEntry[]) {
    // What each listing tool lists, read once per tool (an upstream server may have 300 tools).
    const lists = entries
      .filter((entry) => this.operationsOf.get(entry.qualifiedName)?.list)
      .map((entry) => {
        const listed = new Set(this.nounsOf.get(entry.qualifiedName));
        for (const word of tokenize(entry.tool.description.slice(0, DESCRIPTION_PLURALS_MAX_CHARS))) {
          const lower = word.toLowerCase();
          if (lower.length > 3 && stem(lower) !== lower) listed.add(stem(lower));
        }
        return listed;
      });
    for (const entry of entries) {
      const ops = this.operationsOf.get(entry.qualifiedName) ?? {};
      if (!ops.search || ops.list) continue;
      const things = [...(this.nounsOf.get(entry.qualifiedName) ?? [])].filter((noun) => noun.length >= 3);
      if (things.length && !lists.some((listed) => things.some((noun) => listed.has(noun)))) this.listsBySearching.add(entry.qualifiedName);
    }
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
    const identifier = readPointers(request, lower, operations, integrations);
    const allWords = this.readNames(request, lower, integrations);
    const plural = new Set<string>();
    const { subject, words, verb } = this.readSubject(this.subjectText(request), operations, plural);
    // "remember" → the memory server: a learned related word that is an integration's own name points at it.
    if (this.parts.relatedNames) for (const [name, weight] of this.catalog.relatedNames(original)) addMax(integrations, name, weight);
    // A request pointed at an integration points at its peers as much (findPeers).
    if (this.parts.peers)
      for (const [name, weight] of [...integrations]) for (const peer of this.peers.get(name) ?? []) addMax(integrations, peer, weight);
    // "repos", "issues": many of a thing are asked for, so tools named after it are asked to list,
    // unless a verb does something else to them ("share the release notes").
    // A request that plainly asks to search ("issues I opened", "look for …") keeps its search.
    const many = (!verb || READING.some((op) => op in verb)) && (operations.search ?? 0) < 1 ? plural : new Set<string>();
    // A number or id names one thing: "issue #42", "note 7", "PROJ-9". It adds to what the words ask,
    // unless their verb does something else to it ("close PR 19").
    if ((identifier || this.namesOne(lower)) && (!verb || READING.some((op) => op in verb))) operations.get = (operations.get ?? 0) + 0.4;
    // A request of intent words alone ("screenshot", "delete") is its own subject.
    return { text: subject.length ? subject.join(' ') : words.join(' '), operations, integrations, words: allWords, many };
  }

  /**
   * What the request's words are about, without what says which thing or where: issue keys,
   * owner/repo, addresses, #channels and "in the repo" are no text to match. A file's path is a file.
   */
  private subjectText(request: string): string {
    return (
      request
        // Quoted text is a value (a title, a message, a label), not what kind of thing is asked for;
        // so is the subject of things looked for ("notes about taxes").
        .replace(/"[^"]*"|“[^”]*”|(?<=^|\s)'[^']*'(?=$|[\s.,;:!?])/g, ' ')
        .replace(TOPIC_CLAUSE, (clause, topic: string) => clause.slice(0, clause.length - topic.length))
        .replace(CONTENT_CLAUSE, (clause, topic: string) => clause.slice(0, clause.length - topic.length))
        // A code symbol ("fetchUser", "parseConfig()") is code to look for, not words — unless its
        // words name a tool's things ("structuredContent" is what `get_structured_content` returns).
        .replace(/\b[a-z]+[A-Z]\w*(?:\(\))?|\b\w+\(\)/g, (symbol) => (this.namesTools(symbol) ? ` ${symbol} ` : ' code '))
        .replace(/https?:\/\/\S+|\bwww\.\S+|\b[a-z0-9-]+\.(?:com|org|net|io|dev)\b/gi, ' ')
        .replace(
          /(?:^|\s)[\w/.-]*\.(?:md|ts|js|json|ya?ml|py|go|rs|txt|toml|lock)\b|\b(?:Docker|Make|Gem|Proc|Jenkins)file\b|(?<![\w-])(?:README|CHANGELOG|CONTRIBUTING)(?![\w-])/gi,
          ' file ',
        )
        .replace(/\b[\w.-]+\/[\w.-]+/g, ' ')
        .replace(/(?:^|\s)#[a-z][\w-]*/g, ' channel ')
        .replace(/\b[A-Z][A-Z0-9]+-\d+\b|(?:^|\s)[#@][\w-]+/g, ' ')
        // "… so I can read the full description": why it is asked, not what.
        .replace(/\bso (?:that )?(?:i|we|you|they) (?:can|could|may)\b.*$/i, ' ')
        // "docs/": a directory.
        .replace(/(?:^|\s)[\w.-]+\/(?=\s|$)/g, ' directory ')
        // "tickets in PROJ", "issues for ENG": a project's or team's key says where, like an issue key.
        .replace(/\b(?:in|for|from|under) (?!(?:PR|CSS|HTML|JSON|URL|API|JQL|MCP|README)\b)[A-Z][A-Z0-9]{1,9}\b/g, ' ')
        // A Slack member id ("U024BE7LH") is a user.
        .replace(/\b[UW](?=[A-Z0-9]*\d)[A-Z0-9]{5,}\b/g, ' user ')
        .replace(
          /\b(?:in|on|from|to|against|for) (?:the |this |that |my |a )?(?:[A-Z][\w-]* |[a-z]+ (?=repo))?(?:repo|repository|project|channel|workspace|team)(?: [A-Z]+\b)?/g,
          ' ',
        )
    );
  }

  /**
   * The integrations the request's words name or point at (into `integrations`), and every word
   * of it as typed, stemmed and folded (a tool's own verb is looked up there).
   */
  private readNames(request: string, lower: string, integrations: Map<string, number>): Set<string> {
    // Product words count wherever they stand, "in the repo" too; inside a web address
    // ("news.ycombinator.com") they say where a page is, which the browser opens, so they count less.
    const addresses = new Set(
      [...(lower.match(WEB_ADDRESS_TEXT) ?? []), ...(lower.match(OWNER_REPO) ?? [])].flatMap((name) =>
        tokenize(name).map((w) => w.toLowerCase()),
      ),
    );
    const allWords = new Set<string>();
    // "GitHub", "GitLab": a name written in camelCase is one word too.
    for (const whole of request.split(/[^A-Za-z0-9]+/))
      if (/[a-z][A-Z]/.test(whole))
        this.nameIntegrations(whole, request, addresses.has(whole.toLowerCase()) ? IN_ADDRESS : 1, integrations);
    for (const raw of tokenize(request)) {
      const word = raw.toLowerCase();
      const terms = new Set([word, stem(word), ...normalizeTerm(word)]);
      // "jotted" is "jot", "noted" "note": a product word in another form.
      const productBase = baseForm(word, this.productWordSet);
      if (productBase) terms.add(productBase);
      for (const term of terms) allWords.add(term);
      // "simulated" (or "fake", read as it) asks what a tool named `simulate_…` does, as "simulate" would.
      for (const term of terms) {
        const base = baseForm(term, this.vocabulary);
        if (base) allWords.add(base);
      }
      const share = addresses.has(word) ? IN_ADDRESS : 1;
      this.nameIntegrations(raw, request, share, integrations);
      for (const term of terms) {
        for (const [name, weight] of Object.entries(PRODUCT_WORDS[term] ?? {})) addMax(integrations, name, weight * share);
      }
    }
    return allWords;
  }

  /**
   * The request's subject words, and the operations it asks (into `operations`): its verb, what a
   * question word asks, the things it names in the plural (into `plural`).
   */
  private readSubject(subjectText: string, operations: Weighted, plural: Set<string>) {
    const subject: string[] = [];
    const words = tokenize(subjectText);
    // A request that opens with a tool's own verb ("gzip the README and give me a link") has that
    // verb: intent words after it are secondary.
    let intentSeen = words.length > 0 && !intentOf(words[0].toLowerCase()) && this.ownVerbSet.has(stem(words[0].toLowerCase()));
    // A question word ("which notes mention …") leaves the verb to come, and counts less if one does.
    const asked: Weighted = {};
    let verb: Weighted | undefined;
    for (const [position, raw] of words.entries()) {
      const word = raw.toLowerCase();
      // "message" is a verb first ("message Bob that …") and a thing after ("an error message").
      const intent = position > 0 && (NOUNS_FIRST.has(word) || this.describes(words, position)) ? undefined : intentOf(word);
      if (intent && QUESTION_WORDS.has(word)) addOperations(asked, intent);
      else if (intent) {
        // The first intent word is the request's verb; later ones are often its object ("a task to update the docs").
        addOperations(operations, intentSeen ? scale(intent, 0.7) : intent);
        verb ??= intent;
        intentSeen = true;
      }
      const own = this.providerWords.get(word) ?? NAME_ALIASES[word];
      // A request's first word, when an intent, is its verb ("file a bug", "log a task"), not its subject.
      // A verb's -ing form is as often a thing ("logging", "pricing"): it stays text.
      const ingForm = !INTENT_WORDS[word] && word.endsWith('ing');
      if (own || /^\d+$/.test(word) || (intent && !ingForm && !DESCRIBING_WORDS.has(word) && (position === 0 || !KEEP_AS_TEXT.has(word))))
        continue;
      // "PRs", "msgs": abbreviations' plurals are too short for the stemmer.
      const singular = word.length === 3 && word.endsWith('s') ? word.slice(0, -1) : stem(word);
      if (word.length >= 3 && singular !== word && !STOP_WORDS.has(word) && this.namesThing(word))
        for (const noun of [singular, ...normalizeTerm(word)]) plural.add(noun);
      // "stories they favorited": the things a tool is named after, many of them.
      const marked = word.endsWith('ed') ? baseForm(word, this.nameNouns) : undefined;
      if (marked && this.nameNouns.has(marked)) plural.add(marked);
      subject.push(raw);
    }
    addOperations(operations, verb ? scale(asked, 0.8) : asked);
    return { subject, words, verb };
  }
  /** The integrations a request word names, weighted by NAMED (less for an everyday word not used as a name). */
  private nameIntegrations(raw: string, request: string, share: number, integrations: Map<string, number>) {
    const word = raw.toLowerCase();
    const own = this.providerWords.get(word) ?? NAME_ALIASES[word];
    if (!own) return;
    const weight = NAMED * share * (EVERYDAY_NAMES.has(word) && !usedAsName(raw, request) ? IN_ADDRESS : 1);
    for (const name of new Set([own, ...(this.sharedNameWords.get(word) ?? [])])) addMax(integrations, name, weight);
  }

  /**
   * Whether an intent word describes rather than asks: "open" as a state ("PRs that are still open",
   * "open issues"), an -ing form after "is" ("the server is running with").
   */
  private describes(words: readonly string[], position: number): boolean {
    const word = words[position].toLowerCase();
    const before = words[position - 1]?.toLowerCase() ?? '';
    const after = words[position + 1]?.toLowerCase() ?? '';
    if (/^(?:is|are|was|were|be|been|being|still|currently|now)$/.test(before)) return word === 'open' || word.endsWith('ing');
    // "the old grocery list note": a list one keeps, not one to make.
    if (
      word === 'list' &&
      after !== 'of' &&
      /^(?:the|a|my|our|this|that|grocery|shopping|todo|do|reading|wish|packing|bucket)$/.test(before)
    )
      return true;
    const plural = (next: string) => next.length >= 3 && stem(next) !== next && this.namesThing(next);
    return word === 'open' && (plural(after) || plural(words[position + 2]?.toLowerCase() ?? ''));
  }

  /** A number that names one thing ("issue 42", "#7", "id"), not one that counts them ("the latest 5 notes"). */
  private namesOne(lower: string): boolean {
    // "the id of the #ops channel" asks for an id; "id 42" gives one.
    if (/\bid\b(?! (?:of|for)\b)|[\w.-]\/[\w.-]+#\d|\b[a-z]+_[a-z0-9]*\d/.test(lower)) return true;
    for (const match of lower.matchAll(/(?:^|\s)(#?)\d+\b(?: (\w+))?/g)) {
      const next = match[2];
      if (match[1] || !next || stem(next) === next || !this.namesThing(next)) return true;
    }
    return false;
  }

  /** Whether every word of a camelCase symbol is a word of tools' names ("structuredContent"). */
  private namesTools(symbol: string): boolean {
    const words = tokenize(symbol).map((w) => stem(w.toLowerCase()));
    return words.length > 1 && words.every((word) => this.nameNouns.has(word));
  }

  /** Whether a word is (a plural of) something tools are named after: "issues" is, "needs" is not. */
  private namesThing(word: string): boolean {
    return this.nameNouns.has(stem(word)) || normalizeTerm(word).some((term) => this.nameNouns.has(term));
  }

  /** Ranked hits that pass `filter`, best first, at most `limit`; `connected` breaks ties. */
  query(
    text: string,
    options: { limit: number; filter?: (entry: ToolEntry) => boolean; connected?: (entry: ToolEntry) => boolean },
  ): ToolSearchHit[] {
    // search_tools takes 200 characters; any other caller of the index is bounded the same way, since
    // reading a request runs on the shared HTTP event loop.
    const request = this.read(text.slice(0, QUERY_MAX_CHARS));
    const askedMany: Weighted = { ...request.operations, list: Math.max(request.operations.list ?? 0, PLURAL_LIST) };
    const askedManyBySearch: Weighted = { ...askedMany, search: Math.max(askedMany.search ?? 0, askedMany.list ?? 0) };
    const textScores = new Map<string, number>();
    let best = 0;
    if (request.text) {
      for (const result of this.search.search(request.text)) {
        textScores.set(String(result.id), result.score);
        best = Math.max(best, result.score);
      }
    }
    const catalogScores = this.parts.catalogText ? this.catalog.textScores(text.slice(0, QUERY_MAX_CHARS)) : new Map<string, number>();
    // A tool of a named integration that does what is asked is a candidate without a word in common.
    const candidates = new Set([...textScores.keys(), ...catalogScores.keys()]);
    for (const name of request.integrations.keys())
      for (const entry of this.byProvider.get(name) ?? []) candidates.add(entry.qualifiedName);
    const hits: ToolSearchHit[] = [];
    for (const id of candidates) {
      const entry = this.byId.get(id);
      if (!entry || (options.filter && !options.filter(entry))) continue;
      const text = best > 0 ? (textScores.get(id) ?? 0) / best : 0;
      const integration = request.integrations.get(entry.provider.manifest.name) ?? 0;
      const own = this.ownVerbs.get(id);
      const nouns = this.nounsOf.get(id);
      const many = request.many.size > 0 && nouns !== undefined && [...request.many].some((noun) => nouns.has(noun));
      const asked =
        operationMatch(
          this.operationsOf.get(id) ?? {},
          many ? (this.listsBySearching.has(id) ? askedManyBySearch : askedMany) : request.operations,
        ) + (own && request.words.has(own.verb) ? own.weight : 0);
      const catalog = catalogScores.get(id) ?? 0;
      const gate = Math.min(1, GATE.floor + GATE.text * Math.max(text, catalog) + GATE.integration * integration);
      const parts: ScoreParts = {
        text,
        catalog,
        operation: asked * gate,
        integration,
        gate,
        connected: options.connected?.(entry) ?? false,
      };
      if (parts.text === 0 && parts.catalog === 0 && parts.operation === 0 && parts.integration < 1) continue;
      const score =
        WEIGHTS.text * parts.text +
        WEIGHTS.catalog * catalog +
        WEIGHTS.operation * parts.operation +
        WEIGHTS.integration * parts.integration;
      // Rounded so that float noise cannot decide an order the tie-break should.
      hits.push({ entry, score: Math.round(score * 1e6) / 1e6, parts });
    }
    deferToHandWritten(hits);
    hits.sort(byRank);
    return hits.slice(0, options.limit);
  }
}

/**
 * How close a tool of the integration another defers to (ProviderManifest.defersTo) must come to
 * the deferring tool's score to rank before it: "about as well", not merely matching — a
 * hand-written tool that answers a different request must not push the right imported one down.
 */
export const SEARCH_DEFERRAL = 0.8;

/** Puts a deferring tool just below the best tool of the integration it defers to, where that one scores within SEARCH_DEFERRAL of it. */
function deferToHandWritten(hits: ToolSearchHit[]): void {
  const best = new Map<string, number>();
  for (const hit of hits) {
    const name = hit.entry.provider.manifest.name;
    best.set(name, Math.max(best.get(name) ?? 0, hit.score));
  }
  for (const hit of hits) {
    const to = hit.entry.provider.manifest.defersTo;
    const theirs = to ? best.get(to) : undefined;
    if (theirs !== undefined && theirs >= SEARCH_DEFERRAL * hit.score && theirs <= hit.score)
      hit.score = Math.round((theirs - 1e-6) * 1e6) / 1e6;
  }
}

/** Best score first; exact ties to the caller's connected integrations, then by name. */
export const byRank = (a: RankedHit, b: RankedHit) =>
  b.score - a.score || Number(b.parts.connected) - Number(a.parts.connected) || a.entry.qualifiedName.localeCompare(b.entry.qualifiedName);

interface RankedHit {
  entry: ToolEntry;
  score: number;
  parts: { connected: boolean };
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

/** Parameters' text by schema: tools that share an input schema share its text, read once. */
const parametersTexts = new WeakMap<object, string>();

/** What a tool's arguments are called and what their descriptions say (its schema's top level), bounded. */
export function parametersText(entry: ToolEntry): string {
  const source: object = entry.tool.inputSchema ?? entry.tool.input;
  let text = parametersTexts.get(source);
  if (text === undefined) {
    text = readParameters(entry);
    parametersTexts.set(source, text);
  }
  return text;
}

function readParameters(entry: ToolEntry): string {
  let schema: Record<string, unknown>;
  try {
    schema = inputJsonSchema(entry.tool);
  } catch {
    return '';
  }
  const properties = schema.properties;
  if (!properties || typeof properties !== 'object') return '';
  const parts: string[] = [];
  for (const [name, property] of Object.entries(properties as Record<string, unknown>)) {
    const description = (property as { description?: unknown } | null)?.description;
    parts.push(name, typeof description === 'string' ? description : '');
  }
  return parts.join(' ').slice(0, PARAMETERS_MAX_CHARS);
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
