import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError } from '../../core/config.js';
import { duplicateNames, readConfigList } from '../../core/config-list.js';
import { unstorableTextPaths } from '../../core/storable-text.js';
import { describeIssues, UPSTREAM_NAME, type UpstreamEntry, upstreamConfigSchema, upstreamEntrySchema } from '../../core/upstream-entry.js';

const VARIABLE = 'UPSTREAM_MCP_SERVERS';

const catalogSchema = z.object({ about: z.string().optional(), servers: z.array(upstreamEntrySchema) }).strict();

/** The curated catalog shipped in catalog.json (validated: a bad edit fails loudly at startup). */
export function loadCatalog(text = readFileSync(new URL('./catalog.json', import.meta.url), 'utf8')): UpstreamEntry[] {
  const parsed = catalogSchema.safeParse(JSON.parse(text));
  if (!parsed.success) throw new Error(`providers/remote-mcp/catalog.json: ${describeIssues(parsed.error).join('; ')}`);
  return parsed.data.servers;
}

/**
 * UPSTREAM_MCP_SERVERS: JSON (an array) or the path of a JSON file holding one. Each element is a
 * catalog name (`"deepwiki"`) or a full entry (entry.ts). Throws a ConfigError that says where in
 * the JSON what is wrong, e.g. `[1].auth.header: expected an HTTP header name`.
 */
export function parseUpstreamServers(value: string | undefined, catalogEntries?: readonly UpstreamEntry[]): UpstreamEntry[] {
  const { items, where } = readConfigList(VARIABLE, value, upstreamConfigSchema);
  if (!items.length) return [];
  const catalog = catalogEntries ?? loadCatalog();
  const fail = (message: string): never => {
    throw new ConfigError([{ variable: VARIABLE, message }]);
  };
  const entries: UpstreamEntry[] = [];
  const problems: string[] = [];
  items.forEach((item, index) => {
    const parsed = parseUpstreamItem(item, catalog, `[${index}]`);
    if ('entry' in parsed) entries.push(parsed.entry);
    else problems.push(...parsed.problems);
  });
  problems.push(...duplicateNames(entries));
  if (problems.length) fail(`${where}${problems.join('; ')}`);
  return entries;
}

/**
 * One element of an upstream list: a catalog name or a full entry. The one check both the
 * operator's UPSTREAM_MCP_SERVERS and a tenant's own servers (admin CLI, portal) go through.
 */
function parseUpstreamItem(
  item: unknown,
  catalog: readonly UpstreamEntry[],
  where = '',
): { entry: UpstreamEntry } | { problems: string[] } {
  if (typeof item === 'string') {
    const known = catalog.find((e) => e.name === item);
    if (known) return { entry: known };
    return { problems: [`${where || '(top level)'}: "${item}" is not in the catalog (known: ${catalog.map((e) => e.name).join(', ')})`] };
  }
  const entry = upstreamEntrySchema.safeParse(item);
  return entry.success ? { entry: entry.data } : { problems: describeIssues(entry.error, where) };
}

/**
 * A tenant's upstream server as an administrator types it: a catalog name (`deepwiki`) or a JSON
 * entry (`{"name": …}`). Throws an Error saying what is wrong, e.g. `auth.header: expected an HTTP header name`.
 */
export function parseTenantUpstream(text: string, catalogEntries?: readonly UpstreamEntry[]): UpstreamEntry {
  const trimmed = text.trim();
  if (!trimmed) throw new Error('expected a catalog name or a JSON entry, got nothing');
  let item: unknown = trimmed;
  if (trimmed.startsWith('{') || trimmed.startsWith('"')) {
    try {
      item = JSON.parse(trimmed);
    } catch (err) {
      throw new Error(`not valid JSON (${(err as Error).message.slice(0, 120)})`);
    }
    // An escape (`\u0000`, a lone `\ud800`) makes text Postgres cannot keep: refused here, by name.
    const unstorable = unstorableTextPaths(item);
    if (unstorable.length) throw new Error(`${unstorable.join(', ')}: U+0000 or an unpaired surrogate, which no entry can hold`);
  } else if (!UPSTREAM_NAME.test(trimmed)) {
    throw new Error(`"${trimmed.slice(0, 60)}" is neither a catalog name nor a JSON entry (an object in braces)`);
  }
  const parsed = parseUpstreamItem(item, catalogEntries ?? loadCatalog());
  if ('problems' in parsed) throw new Error(parsed.problems.join('; '));
  return parsed.entry;
}
