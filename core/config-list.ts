import { readFileSync } from 'node:fs';
import type { z } from 'zod';
import { ConfigError } from './config.js';
import { describeIssues } from './upstream-entry.js';

/**
 * A configuration variable holding a JSON array, or the path of a JSON file holding one
 * (UPSTREAM_MCP_SERVERS, OPENAPI_INTEGRATIONS). Returns the array's items as `schema` accepts the
 * list, and `where` (the file's path and `: `, or '') to put before each problem. Throws a
 * ConfigError naming the variable and the problem. An empty value is an empty list.
 */
export function readConfigList(variable: string, value: string | undefined, schema: z.ZodType): { items: unknown[]; where: string } {
  const fail = (message: string): never => {
    throw new ConfigError([{ variable, message }]);
  };
  const text = value?.trim();
  if (!text) return { items: [], where: '' };
  let source = text;
  let where = '';
  if (!text.startsWith('[')) {
    where = `${text}: `;
    try {
      source = readFileSync(text, 'utf8');
    } catch (err) {
      fail(`is neither a JSON array nor a readable file (${(err as { code?: string }).code ?? 'unreadable'})`);
    }
  }
  let json: unknown;
  try {
    json = JSON.parse(source);
  } catch (err) {
    fail(`${where}not valid JSON (${(err as Error).message.slice(0, 120)})`);
  }
  const list = schema.safeParse(json);
  if (!list.success) fail(`${where}${describeIssues(list.error).join('; ')}`);
  return { items: list.data as unknown[], where };
}

/** The names listed twice among `entries`, as problems (`"x" is listed twice`). */
export function duplicateNames(entries: readonly { name: string }[]): string[] {
  const seen = new Set<string>();
  const problems: string[] = [];
  for (const entry of entries) {
    if (seen.has(entry.name)) problems.push(`"${entry.name}" is listed twice`);
    seen.add(entry.name);
  }
  return problems;
}
