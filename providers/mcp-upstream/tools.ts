import { z } from 'zod';
import type { ListedTool } from '../../core/ports/upstream-tool-catalogs.js';
import type { UpstreamEntry } from '../../core/upstream-entry.js';
import type { ToolAccess, ToolContext, ToolDefinition } from '../sdk.js';
import { type CallToolAnswer, toolResultOf } from './result.js';
import { argumentsTooCostly, schemaCost } from './schema-cost.js';
import { upstreamSchemaValidator } from './schema-validator.js';
import { uniqueToolNames } from './tool-names.js';

/** What a hostile or careless upstream can put into Switchboard's catalog, at most. */
export const UPSTREAM_LIMITS = {
  /** Tools kept per server (the rest are left out, and logged). */
  tools: 300,
  /** tools/list pages followed. */
  pages: 20,
  /** An upstream tool name longer than this is left out (MCP suggests ≤ 128). */
  nameChars: 128,
  /** Descriptions are cut here. */
  descriptionChars: 2000,
  /** An input schema larger than this (JSON) leaves its tool out. */
  schemaBytes: 64 * 1024,
} as const;

/**
 * Access as the MCP spec defines the hints: `readOnlyHint: true` → read; otherwise
 * `destructiveHint` decides, and it defaults to true — so only `destructiveHint: false` makes a
 * write, and a tool annotated with nothing is destructive (its calls wait for approval by default).
 * A tenant administrator can treat such a tool otherwise (core/tool-overrides.ts).
 */
export function accessOf(annotations: ListedTool['annotations']): ToolAccess {
  if (annotations?.readOnlyHint === true) return 'read';
  if (annotations?.destructiveHint === false) return 'write';
  return 'destructive';
}

export type CallUpstream = (upstreamName: string, args: unknown, ctx: ToolContext) => Promise<CallToolAnswer>;

export interface ConvertedTools {
  tools: ToolDefinition[];
  /** Why tools were left out, for the log (names cut to 80 characters). */
  dropped: string[];
  /** The listed tools that were kept, with only the fields Switchboard reads (what a saved catalog holds). */
  kept: ListedTool[];
}

/**
 * The server's tools as Switchboard tools: names sanitised and unique, descriptions cut, the input
 * schema kept as JSON Schema (validated with ajv on every call) and annotations mapped to access.
 */
export function convertTools(entry: UpstreamEntry, listed: readonly ListedTool[], call: CallUpstream): ConvertedTools {
  const dropped: string[] = [];
  const validator = upstreamSchemaValidator();
  const allow = entry.tools ? new Set(entry.tools) : undefined;
  const kept: { tool: ListedTool; schema: Record<string, unknown>; validate: (v: unknown) => string | undefined }[] = [];
  for (const tool of listed) {
    const shown = String(tool?.name ?? '').slice(0, 80);
    if (typeof tool?.name !== 'string' || !tool.name || tool.name.length > UPSTREAM_LIMITS.nameChars) {
      dropped.push(`${shown || '(no name)'}: bad name`);
      continue;
    }
    if (allow && !allow.has(tool.name)) continue;
    if (kept.length >= UPSTREAM_LIMITS.tools) {
      dropped.push(`${shown}: more than ${UPSTREAM_LIMITS.tools} tools`);
      continue;
    }
    const schema = schemaOf(tool.inputSchema);
    if (!schema) {
      dropped.push(`${shown}: input schema is not a JSON object schema under ${UPSTREAM_LIMITS.schemaBytes} bytes`);
      continue;
    }
    const cost = schemaCost(schema);
    if ('reason' in cost) {
      dropped.push(`${shown}: input schema too costly to check (${cost.reason})`);
      continue;
    }
    let check: (v: unknown) => { valid: boolean; errorMessage?: string };
    try {
      check = validator.getValidator(withoutUnboundedKeywords(schema) as never);
    } catch (err) {
      dropped.push(`${shown}: input schema does not compile (${(err as Error).message.slice(0, 80)})`);
      continue;
    }
    kept.push({
      tool,
      schema,
      validate: (v) => {
        // Beyond what the schema's cost was worked out for (schema-cost.ts): refused before ajv walks it.
        const tooCostly = argumentsTooCostly(v, cost.perValue);
        if (tooCostly) return tooCostly;
        const result = check(v);
        return result.valid ? undefined : (result.errorMessage ?? 'invalid');
      },
    });
  }
  const names = uniqueToolNames(kept.map((k) => k.tool.name));
  const tools = kept.map(({ tool, schema, validate }, i): ToolDefinition => {
    const upstreamName = tool.name;
    const text = typeof tool.description === 'string' ? tool.description : (tool.title ?? tool.annotations?.title ?? '');
    return {
      name: names[i],
      description: String(text).slice(0, UPSTREAM_LIMITS.descriptionChars) || `${upstreamName} on ${entry.displayName}`,
      access: accessOf(tool.annotations),
      inputSchema: schema,
      input: z.unknown().superRefine((value, ctx) => {
        const problem = validate(value);
        if (problem) ctx.addIssue({ code: 'custom', message: problem.slice(0, 300) });
      }),
      run: async (args, ctx) => toolResultOf(await call(upstreamName, args, ctx)),
    };
  });
  const keptListed = kept.map(({ tool, schema }) => ({
    name: tool.name,
    ...(typeof tool.title === 'string' && { title: tool.title }),
    ...(typeof tool.description === 'string' && { description: tool.description.slice(0, UPSTREAM_LIMITS.descriptionChars) }),
    inputSchema: schema,
    ...(tool.annotations && typeof tool.annotations === 'object' && { annotations: tool.annotations }),
  }));
  return { tools, dropped, kept: keptListed };
}

/** A copy of the schema without `$id`/`$schema` (ids would be shared in ajv's cache), or undefined. */
function schemaOf(value: unknown): Record<string, unknown> | undefined {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  let json: string;
  try {
    json = JSON.stringify(value);
  } catch {
    return undefined;
  }
  if (Buffer.byteLength(json) > UPSTREAM_LIMITS.schemaBytes) return undefined;
  const { $id: _id, $schema: _dialect, ...schema } = JSON.parse(json) as Record<string, unknown>;
  if (schema.type !== undefined && schema.type !== 'object') return undefined;
  return { type: 'object', ...schema };
}

/**
 * The schema Switchboard validates with: without `pattern` and `patternProperties`, whose regular
 * expressions come from the upstream and would run synchronously on the worker (a catastrophic
 * backtracking pattern cannot be stopped by the call's deadline), and without `uniqueItems`, which
 * ajv checks by comparing every item with every other (a megabyte of distinct items: minutes of
 * the worker's time). The server still checks them.
 */
function withoutUnboundedKeywords(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutUnboundedKeywords);
  if (!value || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    if ((key === 'pattern' && typeof child === 'string') || key === 'patternProperties') continue;
    if (key === 'uniqueItems' && typeof child === 'boolean') continue;
    out[key] = withoutUnboundedKeywords(child);
  }
  return out;
}
