/**
 * JSON with object keys sorted at every level, so two requests that mean the same thing (keys in
 * another order) serialise the same. Undefined values are left out, as JSON.stringify does.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value)) ?? 'null';
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const inner = (value as Record<string, unknown>)[key];
    if (inner !== undefined) sorted[key] = sortKeys(inner);
  }
  return sorted;
}
