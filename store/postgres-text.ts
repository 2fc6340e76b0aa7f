/**
 * Postgres `text` cannot hold U+0000: a parameter carrying one fails the whole statement
 * ("invalid byte sequence for encoding UTF8: 0x00"). Strings an agent chose (a tool name, an
 * argument name, an id it quotes back) may carry one, so the repositories that receive them go
 * through these instead of letting the statement fail.
 */

/** Whether `value` can be a Postgres text value at all; one that cannot names no stored row. */
export const storableText = (value: string): boolean => !value.includes('\u0000');

/** `value` as text Postgres keeps, each U+0000 shown as U+FFFD: for records of what was asked (audit rows). */
export const asStorableText = (value: string): string => value.replaceAll('\u0000', '\uFFFD');

/** A JSON value as `jsonb` keeps it (jsonb refuses `\u0000` too): every string and key through asStorableText. */
export function asStorableJson<T>(value: T): T {
  if (typeof value === 'string') return asStorableText(value) as T;
  if (Array.isArray(value)) return value.map(asStorableJson) as T;
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [asStorableText(key), asStorableJson(inner)])) as T;
  }
  return value;
}
