/**
 * Text Postgres cannot keep, found before it is sent: U+0000 (no `text` or `jsonb` value holds it)
 * and a lone UTF-16 surrogate (node-postgres would send it as U+FFFD, silently; `jsonb` refuses
 * its `\uD800` escape outright). JSON someone typed (an upstream entry in the portal or the admin
 * CLI) can carry either through an escape, so it is checked where it is parsed and refused by name.
 */

/** A high surrogate with no low one after it, or a low one with no high one before it (UTF-16 code units). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Whether `value` survives a round trip through Postgres text unchanged. */
export const isStorableText = (value: string): boolean => !value.includes('\u0000') && !LONE_SURROGATE.test(value);

/** `value` as Postgres keeps it: each U+0000 and each lone surrogate shown as U+FFFD. */
export const asWellFormedText = (value: string): string =>
  value.replaceAll('\u0000', '\uFFFD').replace(new RegExp(LONE_SURROGATE.source, 'g'), '\uFFFD');

/**
 * Where in a parsed JSON value a string or key is not storable text, as paths (`displayName`,
 * `headers.x-a`); at most `limit` of them, so the report stays short.
 */
export function unstorableTextPaths(value: unknown, limit = 5, path = ''): string[] {
  const found: string[] = [];
  const visit = (inner: unknown, at: string) => {
    if (found.length >= limit) return;
    if (typeof inner === 'string') {
      if (!isStorableText(inner)) found.push(at || '(the value)');
    } else if (Array.isArray(inner)) {
      for (const [i, item] of inner.entries()) visit(item, `${at}[${i}]`);
    } else if (inner && typeof inner === 'object') {
      for (const [key, item] of Object.entries(inner)) {
        const shown = asWellFormedText(key);
        const keyPath = at ? `${at}.${shown}` : shown;
        if (!isStorableText(key)) found.push(`the key ${keyPath}`);
        visit(item, keyPath);
      }
    }
  };
  visit(value, path);
  return found.slice(0, limit);
}
