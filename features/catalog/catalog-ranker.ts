import { readFileSync } from 'node:fs';
import type { ToolEntry } from '../../providers/registry.js';
import { RELATED_WORDS_PATH, searchTerm, searchTerms, tokenize } from './catalog-terms.js';
import { byRank, parametersText } from './tool-search.js';

/**
 * Ranking from the catalog alone, the same for every source (built-in, upstream MCP server): BM25F
 * over what each tool carries — its name split into words, its description (words most of one
 * integration's tools share, "Error Responses", `API-…`, damped), its parameters' names and
 * descriptions, its access (read-only, destructive) and its integration's name and description —
 * with field weights, English (Porter) stemming and stop words; the request expanded by related
 * words learned offline (search-related-words.json, bench/search-train.ts); a bonus for the tools of
 * an integration the request names ("in Notion", "on GitHub", "k8s"). Nothing in here is about any
 * particular tool or integration. The product's index (tool-search.ts) adds `textScores` to its own
 * text score and reads `relatedNames`; `query` ranks by this alone, which `npm run bench -- search`
 * measures beside the product (the ablation table of bench/README.md). Same query, same catalog,
 * same order: ties go to the caller's connected integrations, then by name.
 */

/**
 * The ranking's parameters, chosen on the tuning halves of the evaluation sets (bench/README.md):
 * how much a word counts by where it stands in a tool, BM25 saturation (k1) and length
 * normalisation (b), what a related word counts for against a word of the request itself
 * (expansion), what naming an integration adds to the best text score of 1 (named) and the share
 * of that a naming word earns when not used as a name ("remember", "memory": inPassing).
 */
export const RANKING = {
  fields: { name: 3, description: 1, parameters: 0.35, access: 0.5, integration: 0.4 },
  k1: 1.2,
  b: { name: 0.5, description: 0.75, parameters: 0.5, access: 0, integration: 0.3 },
  expansion: 0.35,
  named: 0.6,
  inPassing: 0.25,
  nameRelated: 0.7,
  coverage: 0.2,
};
const FIELD_WEIGHTS = RANKING.fields;
type Field = keyof typeof FIELD_WEIGHTS;
const FIELDS = Object.keys(FIELD_WEIGHTS) as Field[];

/** Bounds on the work one request or one tool can cause on the shared event loop. */
export const SEARCH_LIMITS = {
  /** Request characters read. */
  queryChars: 500,
  /** Distinct request terms kept (before expansion). */
  queryTerms: 32,
  /** Related words added per request term. */
  relatedPerTerm: 6,
  /** Characters of a tool's description read. */
  descriptionChars: 2000,
} as const;

/** Words shared by most tools of one integration ("Error Responses: 400: Bad request", `API-…`) tell its tools apart no more than its name does. */
const BOILERPLATE_SHARE = 0.5;
const BOILERPLATE_MIN_TOOLS = 5;

interface RelatedFile {
  related: Record<string, string>;
}

let relatedWords: Map<string, [string, number][]> | undefined;

/** The learned related words, read once per process. */
function related(): Map<string, [string, number][]> {
  if (!relatedWords) {
    const file = JSON.parse(readFileSync(RELATED_WORDS_PATH, 'utf8')) as RelatedFile;
    relatedWords = new Map();
    for (const [word, row] of Object.entries(file.related)) {
      relatedWords.set(
        word,
        row.split(' ').map((pair) => {
          const at = pair.lastIndexOf(':');
          return [pair.slice(0, at), Number(pair.slice(at + 1))] as [string, number];
        }),
      );
    }
  }
  return relatedWords;
}

/** Why a hit scored what it did (SEARCH_DEBUG=1 logs these). */
export interface ScoreParts {
  /** BM25F of the request's words and their related words, the best match scaled to 1. */
  text: number;
  /** The share of RANKING.named the tool's integration earned by being named in the request (0, 0.5 or 1). */
  integration: number;
  connected: boolean;
}

export interface ToolSearchHit {
  entry: ToolEntry;
  score: number;
  parts: ScoreParts;
}

/** What a request is read as: weighted terms, and the integrations it names. */
export interface ReadRequest {
  terms: Map<string, number>;
  integrations: Map<string, number>;
}

const PREPOSITION = /^(?:in|on|from|via|using|with|at|to|into|through|over|inside)$/i;
const NAME_FOLLOWER = /^(?:server|integration|app|mcp|api|tools?|workspace|account)$/i;

export class CatalogRanker {
  private readonly entries: ToolEntry[] = [];
  /** term → (tool index, pseudo term frequency across fields) pairs. */
  private readonly postings = new Map<string, { docs: number[]; tfs: number[] }>();
  /** Integration-name word → integration names. */
  private readonly namingWords = new Map<string, Set<string>>();
  private readonly integrationOf: string[] = [];
  /**
   * Per tool, the terms of its name that tell it apart from its integration's other tools (not
   * boilerplate, not the integration's own name): how much of them a request says is `coverage`.
   */
  private readonly nameTerms: string[][] = [];

  constructor(entries: readonly ToolEntry[]) {
    const fieldTerms: Record<Field, string[]>[] = [];
    const totals: Record<Field, number> = { name: 0, description: 0, parameters: 0, access: 0, integration: 0 };
    const byIntegration = new Map<string, number[]>();
    const integrationTerms = new Map<string, string[]>();
    const displayWordsTaken = new Set<string>();
    for (const entry of entries) {
      const m = entry.provider.manifest;
      let ownTerms = integrationTerms.get(m.name);
      if (!ownTerms) {
        ownTerms = searchTerms(`${m.name} ${m.displayName} ${m.description}`.slice(0, SEARCH_LIMITS.descriptionChars));
        integrationTerms.set(m.name, ownTerms);
        this.learnNames(m.name, m.displayName, m.toolPrefix, displayWordsTaken);
      }
      const i = this.entries.length;
      this.entries.push(entry);
      this.integrationOf.push(m.name);
      byIntegration.set(m.name, [...(byIntegration.get(m.name) ?? []), i]);
      const terms: Record<Field, string[]> = {
        name: searchTerms(entry.tool.name),
        description: searchTerms(entry.tool.description.slice(0, SEARCH_LIMITS.descriptionChars)),
        parameters: searchTerms(parametersText(entry)),
        access: entry.tool.access === 'read' ? ['read'] : entry.tool.access === 'destructive' ? ['destruct'] : [],
        integration: ownTerms,
      };
      fieldTerms.push(terms);
      for (const f of FIELDS) totals[f] += terms[f].length;
    }
    const n = Math.max(1, entries.length);
    const average = Object.fromEntries(FIELDS.map((f) => [f, Math.max(1, totals[f] / n)])) as Record<Field, number>;
    const damping = boilerplateDamping(fieldTerms, byIntegration);
    for (const [i, terms] of fieldTerms.entries()) {
      const tf = new Map<string, number>();
      for (const f of FIELDS) {
        const norm = 1 - RANKING.b[f] + (RANKING.b[f] * terms[f].length) / average[f];
        for (const term of terms[f]) tf.set(term, (tf.get(term) ?? 0) + FIELD_WEIGHTS[f] / norm);
      }
      const damp = damping.get(this.integrationOf[i]);
      const own = integrationTerms.get(this.integrationOf[i]) ?? [];
      this.nameTerms.push([...new Set(terms.name)].filter((term) => (damp?.get(term) ?? 1) >= 1 && !own.includes(term)));
      for (const [term, value] of tf) {
        let list = this.postings.get(term);
        if (!list) {
          list = { docs: [], tfs: [] };
          this.postings.set(term, list);
        }
        list.docs.push(i);
        list.tfs.push(value * (damp?.get(term) ?? 1));
      }
    }
  }

  /**
   * The words that name an integration: those of its unique name ("github-mcp" → github, mcp) are
   * its own, shared with any other integration named so; those of its display name and tool
   * prefix go to the first integration listed with them (built-ins come first), so an upstream
   * that calls itself "GitHub" does not take requests for GitHub.
   */
  private learnNames(name: string, displayName: string, toolPrefix: string, displayWordsTaken: Set<string>) {
    const add = (word: string) => {
      const term = searchTerm(word);
      if (!term || term.length < 3) return;
      const set = this.namingWords.get(term) ?? new Set();
      set.add(name);
      this.namingWords.set(term, set);
    };
    for (const word of [...tokenize(name), name.replace(/-/g, '')]) add(word);
    for (const word of [...tokenize(`${displayName} ${toolPrefix}`), displayName.replace(/\s+/g, '')]) {
      const term = searchTerm(word);
      if (!term || displayWordsTaken.has(term)) continue;
      if (!this.namingWords.has(term)) add(word);
      displayWordsTaken.add(term);
    }
  }

  /** The request's weighted terms (its own words, then related words) and the integrations it names. */
  read(text: string): ReadRequest {
    const request = text.slice(0, SEARCH_LIMITS.queryChars);
    const terms = new Map<string, number>();
    const integrations = new Map<string, number>();
    // Quoted text is a value (a title, a message), which says less about which tool than the words around it.
    const quoted = new Set<string>();
    for (const match of request.matchAll(/"([^"]*)"|“([^”]*)”/g)) for (const t of searchTerms(match[1] ?? match[2] ?? '')) quoted.add(t);
    const words = tokenize(request);
    for (const [position, raw] of words.entries()) {
      const term = searchTerm(raw);
      if (!term) continue;
      const named = this.namingWords.get(term) ?? this.namingWords.get(raw.toLowerCase());
      if (named) {
        const asName =
          /^[A-Z]/.test(raw) ||
          PREPOSITION.test(words[position - 1] ?? '') ||
          NAME_FOLLOWER.test(words[position + 1] ?? '') ||
          /^[a-z]+\d+[a-z]*$/i.test(raw);
        for (const name of named) integrations.set(name, Math.max(integrations.get(name) ?? 0, asName ? 1 : RANKING.inPassing));
        // A name used as one says where, not what: it leaves the text to the other words.
        if (asName) continue;
      }
      if (terms.size >= SEARCH_LIMITS.queryTerms && !terms.has(term)) continue;
      terms.set(term, Math.max(terms.get(term) ?? 0, quoted.has(term) ? 0.4 : 1));
    }
    const own = [...terms.entries()];
    const table = related();
    for (const [term, weight] of own) {
      for (const [other, w] of (table.get(term) ?? []).slice(0, SEARCH_LIMITS.relatedPerTerm)) {
        // A whole-word abbreviation ("k8s", "PR") stands for its expansion: it names what it stands for.
        if (w >= 1) for (const name of this.namingWords.get(other) ?? []) integrations.set(name, Math.max(integrations.get(name) ?? 0, 1));
        const expanded = weight * (w >= 1 ? 1 : RANKING.expansion * w);
        if ((terms.get(other) ?? 0) < expanded) terms.set(other, expanded);
      }
    }
    return { terms, integrations };
  }

  /**
   * Integrations a request word points at through a learned related word that is the integration's
   * own name ("remember" → "memory"), with the related word's weight; abbreviations (weight 1) are
   * read() names already.
   */
  relatedNames(text: string): Map<string, number> {
    const out = new Map<string, number>();
    const table = related();
    for (const raw of tokenize(text.slice(0, SEARCH_LIMITS.queryChars))) {
      const term = searchTerm(raw);
      if (!term || this.namingWords.has(term)) continue;
      for (const [other, w] of (table.get(term) ?? []).slice(0, SEARCH_LIMITS.relatedPerTerm))
        if (w >= RANKING.nameRelated) for (const name of this.namingWords.get(other) ?? []) out.set(name, Math.max(out.get(name) ?? 0, w));
    }
    return out;
  }

  /** Every matching tool's BM25F score over the request's terms, by qualified name, the best scaled to 1. */
  textScores(text: string): Map<string, number> {
    const scores = this.bm25(this.read(text).terms);
    let best = 0;
    for (const score of scores.values()) best = Math.max(best, score);
    const out = new Map<string, number>();
    for (const [doc, score] of scores) out.set(this.entries[doc].qualifiedName, score / best);
    return out;
  }

  /** Each matching tool's BM25F score over weighted terms, by tool index. */
  private bm25(terms: ReadonlyMap<string, number>): Map<number, number> {
    const n = this.entries.length;
    const scores = new Map<number, number>();
    for (const [term, weight] of terms) {
      const list = this.postings.get(term);
      if (!list) continue;
      const idf = Math.log(1 + (n - list.docs.length + 0.5) / (list.docs.length + 0.5));
      for (let k = 0; k < list.docs.length; k++) {
        const tf = list.tfs[k];
        const doc = list.docs[k];
        scores.set(doc, (scores.get(doc) ?? 0) + (weight * idf * tf * (RANKING.k1 + 1)) / (tf + RANKING.k1));
      }
    }
    return scores;
  }

  /** The share of a tool's distinguishing name terms (`nameTerms`) the request's terms say. */
  private coverage(doc: number, terms: ReadonlyMap<string, number>): number | undefined {
    const own = this.nameTerms[doc];
    if (!own.length) return undefined;
    let said = 0;
    for (const term of own) said += Math.min(1, terms.get(term) ?? 0);
    return said / own.length;
  }

  /** Ranked hits that pass `filter`, best first, at most `limit`; `connected` breaks ties. */
  query(
    text: string,
    options: { limit: number; filter?: (entry: ToolEntry) => boolean; connected?: (entry: ToolEntry) => boolean },
  ): ToolSearchHit[] {
    const request = this.read(text);
    const scores = this.bm25(request.terms);
    let best = 0;
    for (const [doc, score] of scores) if (!options.filter || options.filter(this.entries[doc])) best = Math.max(best, score);
    const hits: ToolSearchHit[] = [];
    for (const [doc, score] of scores) {
      const entry = this.entries[doc];
      if (options.filter && !options.filter(entry)) continue;
      const parts: ScoreParts = {
        text: best > 0 ? score / best : 0,
        integration: request.integrations.get(this.integrationOf[doc]) ?? 0,
        connected: options.connected?.(entry) ?? false,
      };
      // Rounded so that float noise cannot decide an order the tie-break should.
      const coverage = RANKING.coverage * (this.coverage(doc, request.terms) ?? 0) * parts.text;
      hits.push({ entry, score: Math.round((parts.text + coverage + RANKING.named * parts.integration) * 1e6) / 1e6, parts });
    }
    hits.sort(byRank);
    return hits.slice(0, options.limit);
  }
}

/**
 * Per integration with enough tools, how much each word common to most of them still counts: a word
 * in every tool of one integration counts a quarter, one in half of them fully.
 */
function boilerplateDamping(fieldTerms: Record<Field, string[]>[], byIntegration: Map<string, number[]>) {
  const damping = new Map<string, Map<string, number>>();
  for (const [name, docs] of byIntegration) {
    if (docs.length < BOILERPLATE_MIN_TOOLS) continue;
    const counts = new Map<string, number>();
    for (const i of docs) {
      const t = fieldTerms[i];
      for (const term of new Set([...t.name, ...t.description])) counts.set(term, (counts.get(term) ?? 0) + 1);
    }
    const factors = new Map<string, number>();
    for (const [term, count] of counts) {
      const share = count / docs.length;
      if (share > BOILERPLATE_SHARE) factors.set(term, (BOILERPLATE_SHARE / share) ** 2);
    }
    damping.set(name, factors);
  }
  return damping;
}
