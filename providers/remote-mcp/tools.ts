import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { ListedTool } from '../../core/ports/upstream-tool-catalogs.js';
import type { UpstreamEntry } from '../../core/upstream-entry.js';
import type { ToolAccess, ToolContext, ToolDefinition } from '../sdk/index.js';
import { type CallToolAnswer, toolResultOf } from './result.js';
import { type SchemaChecker, sharedSchemaChecker } from './schema-checker.js';
import { argumentsTooCostly, MAX_ANALYSIS_STEPS, schemaCost } from './schema-cost.js';
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
  /** The schemas of one listing together (JSON): the tools past it are left out (what a saved catalog can hold). */
  listingSchemaBytes: 2 * 1024 * 1024,
  /** One tools/list answer, at most (bytes): a larger page fails the listing before the SDK parses it. */
  listingPageBytes: 1024 * 1024,
  /** Steps of working out the schemas' cost (schema-cost.ts) one listing may take; the tools past it are left out. */
  listingAnalysisSteps: 2 * MAX_ANALYSIS_STEPS,
} as const;

/**
 * Costs worked out, by schema hash, across listings, servers and tenants of this process: a
 * server listed again with the schemas it had costs hashing them only.
 */
const COSTS_KEPT = 2000;
const knownCosts = new Map<string, ReturnType<typeof schemaCost>>();

function costOf(key: string, schema: Record<string, unknown>, maxSteps: number): ReturnType<typeof schemaCost> {
  const known = knownCosts.get(key);
  if (known) {
    knownCosts.delete(key);
    knownCosts.set(key, known);
    return { ...known, steps: 0 };
  }
  const cost = schemaCost(schema, maxSteps);
  // A schema given up on for the listing's budget alone may fit another listing: not remembered.
  if ('perValue' in cost || maxSteps === MAX_ANALYSIS_STEPS) {
    knownCosts.set(key, cost);
    if (knownCosts.size > COSTS_KEPT) knownCosts.delete(knownCosts.keys().next().value as string);
  }
  return cost;
}

interface ConvertOptions {
  /** Where arguments are checked (the process's shared pool unless a test gives its own). */
  checker?: SchemaChecker;
  /** Whose checks these are: one server's checks take one thread at a time (schema-checker.ts). */
  lane?: string;
}

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

type CallUpstream = (upstreamName: string, args: unknown, ctx: ToolContext) => Promise<CallToolAnswer>;

interface ConvertedTools {
  tools: ToolDefinition[];
  /** Why tools were left out, for the log (names cut to 80 characters). */
  dropped: string[];
  /** The listed tools that were kept, with only the fields Switchboard reads (what a saved catalog holds). */
  kept: ListedTool[];
}

/**
 * The server's tools as Switchboard tools: names sanitised and unique, descriptions cut, the input
 * schema kept as JSON Schema and annotations mapped to access. Listing compiles nothing: the work
 * here is bounded by the listing's size (UPSTREAM_LIMITS); a schema is compiled at its tool's first
 * call, in the checker's threads, and kept there by its hash for every later listing.
 */
export function convertTools(
  entry: UpstreamEntry,
  listed: readonly ListedTool[],
  call: CallUpstream,
  options: ConvertOptions = {},
): ConvertedTools {
  const dropped: string[] = [];
  const lane = options.lane ?? entry.name;
  const allow = entry.tools ? new Set(entry.tools) : undefined;
  const kept: { tool: ListedTool; schema: Record<string, unknown>; validate: (v: unknown) => Promise<string | undefined> }[] = [];
  let schemaBytes = 0;
  let analysisSteps = 0;
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
    const copy = schemaOf(tool.inputSchema);
    if (!copy) {
      dropped.push(`${shown}: input schema is not a JSON object schema under ${UPSTREAM_LIMITS.schemaBytes} bytes`);
      continue;
    }
    if (schemaBytes + copy.bytes > UPSTREAM_LIMITS.listingSchemaBytes) {
      dropped.push(`${shown}: the listing's schemas pass ${UPSTREAM_LIMITS.listingSchemaBytes} bytes`);
      continue;
    }
    const left = UPSTREAM_LIMITS.listingAnalysisSteps - analysisSteps;
    const cost = costOf(copy.key, copy.schema, Math.min(MAX_ANALYSIS_STEPS, left));
    analysisSteps += cost.steps;
    if ('reason' in cost) {
      dropped.push(
        left < MAX_ANALYSIS_STEPS
          ? `${shown}: the listing's schemas take more than ${UPSTREAM_LIMITS.listingAnalysisSteps} steps to work out`
          : `${shown}: input schema too costly to check (${cost.reason})`,
      );
      continue;
    }
    schemaBytes += copy.bytes;
    const { schema, key } = copy;
    const checker = options.checker ?? sharedSchemaChecker();
    kept.push({
      tool,
      schema,
      validate: async (v) => {
        // Beyond what the schema's cost was worked out for (schema-cost.ts): refused before it is checked.
        return argumentsTooCostly(v, cost.perValue) ?? (await checker.check(lane, key, schema, v));
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
      asyncInput: true,
      input: z.unknown().superRefine(async (value, ctx) => {
        const problem = await validate(value);
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

/** A copy of the schema without `$id`/`$schema`, its size and its hash (JSON), or undefined. */
function schemaOf(value: unknown): { schema: Record<string, unknown>; bytes: number; key: string } | undefined {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  let json: string;
  try {
    json = JSON.stringify(value);
  } catch {
    return undefined;
  }
  const bytes = Buffer.byteLength(json);
  if (bytes > UPSTREAM_LIMITS.schemaBytes) return undefined;
  const { $id: _id, $schema: _dialect, ...rest } = JSON.parse(json) as Record<string, unknown>;
  if (rest.type !== undefined && rest.type !== 'object') return undefined;
  const schema = { type: 'object', ...rest };
  return { schema, bytes, key: createHash('sha256').update(JSON.stringify(schema)).digest('base64url') };
}
