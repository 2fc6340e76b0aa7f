import { createHash } from 'node:crypto';

/** A stable number for a name, the way services give every login a numeric id. */
export const numericId = (name: string) => Number.parseInt(createHash('sha256').update(name).digest('hex').slice(0, 8), 16);

/** A stable hex string for a name (account ids, shas). */
export const hexId = (name: string, length = 40) => createHash('sha256').update(name).digest('hex').slice(0, length);

export const gitSha = (kind: string, data: Buffer | string) => {
  const bytes = Buffer.isBuffer(data) ? data : Buffer.from(data);
  return createHash('sha1')
    .update(Buffer.concat([Buffer.from(`${kind} ${bytes.length}\0`), bytes]))
    .digest('hex');
};

/** Page `page` (1-based) of `perPage` items. */
export const pageOf = <T>(items: T[], page: number, perPage: number) => items.slice((page - 1) * perPage, page * perPage);

/** Integer query parameter with a default and bounds. */
export function intParam(value: unknown, fallback: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = Number.parseInt(String(value ?? ''), 10);
  return Number.isFinite(n) && n > 0 ? Math.min(n, max) : fallback;
}

/** Search-query tokens: `key:value`, `key:"quoted value"`, `"a phrase"`, bare words. */
export function tokenize(query: string): { qualifiers: [string, string][]; terms: string[] } {
  const qualifiers: [string, string][] = [];
  const terms: string[] = [];
  for (const m of query.matchAll(/([\w-]+):"([^"]*)"|([\w-]+):(\S+)|"([^"]*)"|(\S+)/g)) {
    if (m[1]) qualifiers.push([m[1].toLowerCase(), m[2]]);
    else if (m[3]) qualifiers.push([m[3].toLowerCase(), m[4]]);
    else terms.push((m[5] ?? m[6]).toLowerCase());
  }
  return { qualifiers, terms };
}
