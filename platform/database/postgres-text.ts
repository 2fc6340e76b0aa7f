import { asWellFormedText, isStorableText } from '../../core/storable-text.js';

/**
 * Postgres `text` cannot hold U+0000: a parameter carrying one fails the whole statement
 * ("invalid byte sequence for encoding UTF8: 0x00"). A lone UTF-16 surrogate ('\uD800') is the
 * other such text: node-postgres sends it in a `text` parameter as U+FFFD (silently), and in a
 * `jsonb` one as the JSON escape `\ud800`, which Postgres refuses ("Unicode low surrogate must
 * follow a high surrogate"). Strings an agent chose (a tool name, an argument name, an id it
 * quotes back) may carry either, so the repositories that receive them go through these instead
 * of letting the statement fail.
 */

/** Whether `value` can be a Postgres text value at all; one that cannot names no stored row. */
export const storableText = (value: string): boolean => isStorableText(value);

/** `value` as text Postgres keeps, each U+0000 and lone surrogate shown as U+FFFD: for records of what was asked (audit rows). */
export const asStorableText = (value: string): string => asWellFormedText(value);

/** A JSON value as `jsonb` keeps it: every string and key through asStorableText. */
export function asStorableJson<T>(value: T): T {
  if (typeof value === 'string') return asStorableText(value) as T;
  if (Array.isArray(value)) return value.map(asStorableJson) as T;
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [asStorableText(key), asStorableJson(inner)])) as T;
  }
  return value;
}
