import { resolve } from 'node:path';
import { stemmer } from 'stemmer';

/**
 * How request and catalog text become search terms: words split at punctuation, snake_case,
 * kebab-case and camelCase humps, lower-cased, common English words dropped, the rest reduced to
 * their Porter stem ("repositories" and "repository" → "repositori"). The same reading for the
 * catalog (when indexing) and for requests.
 */

export const RELATED_WORDS_PATH = resolve(import.meta.dirname, 'search-related-words.json');

export const STOP_WORDS = new Set(
  (
    'a an the of to for in on and or my me all with by as is am are was were be been being it its this that these those i you we he she ' +
    'they do does did have has had there can could would should will shall may might must please what which who whom how whats at from ' +
    'into onto about against across up out some any one our your their them us so just now want need like help also really via using ' +
    'kindly quickly then than if else when where while not no yes ok okay let lets get got give me mine our ours yours here its im ive ' +
    'id dont doesnt isnt cant wont go'
  ).split(' '),
);

/** Splits on anything not a letter or digit, and at camelCase humps ("getChannelHistory", "HTMLPage"). */
export function tokenize(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
}

/** A word's search term: its stem, or nothing for a stop word, a lone letter or a bare number. */
export function searchTerm(word: string): string | undefined {
  const lower = word.toLowerCase();
  if (lower.length < 2 || STOP_WORDS.has(lower) || /^\d+$/.test(lower)) return undefined;
  return /^[a-z]+$/.test(lower) ? stemmer(lower) : lower;
}

/** The search terms of a text, in order, repeats kept (they count as term frequency). */
export function searchTerms(text: string): string[] {
  const terms: string[] = [];
  for (const word of tokenize(text)) {
    const term = searchTerm(word);
    if (term) terms.push(term);
  }
  return terms;
}
