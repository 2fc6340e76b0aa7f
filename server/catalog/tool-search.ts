import MiniSearch from 'minisearch';
import type { ToolEntry } from '../../providers/registry.js';

/**
 * Deterministic keyword ranking (BM25+, minisearch) over a tool's qualified name, tool name,
 * description and provider text. Names split on `_` and camelCase; a few synonyms and plural
 * forms fold together so "list PRs" finds `list_pull_requests`. Same query, same catalog, same
 * order: ties break by qualified name.
 */

const SYNONYMS: Record<string, string[]> = {
  pr: ['pull', 'request'],
  msg: ['message'],
  ticket: ['issue'],
  repository: ['repo'],
  dm: ['direct', 'message'],
};

const STOP_WORDS = new Set(['a', 'an', 'the', 'of', 'to', 'for', 'in', 'on', 'and', 'or', 'my', 'me', 'all', 'with', 'by', 'as', 'is']);

/** Plural and simple verb endings off, so "issues" meets "issue". */
function stem(term: string): string {
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

export interface ToolSearchHit {
  entry: ToolEntry;
  score: number;
}

export class ToolSearchIndex {
  private readonly search: MiniSearch<ToolDocument>;
  private readonly byId = new Map<string, ToolEntry>();

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
        boost: { toolName: 3, qualifiedName: 2, providerText: 2, description: 1 },
        prefix: (term) => term.length >= 3,
        fuzzy: (term) => (term.length >= 6 ? 0.15 : false),
        combineWith: 'OR',
      },
    });
    const docs = entries.map((entry) => {
      this.byId.set(entry.qualifiedName, entry);
      const m = entry.provider.manifest;
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

  /** Ranked hits that pass `filter`, best first, at most `limit`. */
  query(text: string, options: { limit: number; filter?: (entry: ToolEntry) => boolean }): ToolSearchHit[] {
    const hits: ToolSearchHit[] = [];
    for (const result of this.search.search(text)) {
      const entry = this.byId.get(String(result.id));
      if (entry && (!options.filter || options.filter(entry))) hits.push({ entry, score: result.score });
    }
    hits.sort((a, b) => b.score - a.score || a.entry.qualifiedName.localeCompare(b.entry.qualifiedName));
    return hits.slice(0, options.limit);
  }
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
