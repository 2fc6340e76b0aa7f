/**
 * What a person sees of a call before approving it: the tool, the account and the arguments —
 * with every secret argument's value replaced and long values cut, so the summary can be shown
 * on a page, answered to the agent and kept in a database row without carrying a secret. Pure.
 */

/** Shown instead of a secret argument's value. */
export const SECRET_PLACEHOLDER = '[secret]';
/** A string longer than this many characters is cut (with an ellipsis and its length). */
export const SUMMARY_STRING_MAX_CHARS = 300;
/** At most this many items of an array, or keys of an object, are shown. */
export const SUMMARY_ITEMS_MAX = 20;
/** Deeper values are shown as `…`. */
const MAX_DEPTH = 4;

export interface ApprovalSummary {
  /** Qualified tool name. */
  tool: string;
  /** The account the call runs on (its label), or null for a built-in tool that needs none. */
  account: string | null;
  arguments: Record<string, unknown>;
}

/**
 * Names whose value is a secret even when a schema does not say so (defence in depth: an upstream
 * MCP server's schema may not mark them).
 */
const SECRET_NAME = /(pass(word|phrase)?|secret|token|api[-_]?key|credential|private[-_]?key|authorization|cookie)/i;

/**
 * Whether a JSON Schema marks a property secret: `"x-secret": true` (Switchboard's marking; a zod
 * field gets it with `.meta({ 'x-secret': true })`), or JSON Schema's own `writeOnly: true`.
 */
export const isSecretSchema = (schema: unknown): boolean => {
  const s = schema as Record<string, unknown> | undefined;
  return !!s && typeof s === 'object' && (s['x-secret'] === true || s.writeOnly === true);
};

type Schema = Record<string, unknown> | undefined;

/** The schema of property `key` of an object schema (through anyOf/oneOf/allOf branches). */
function propertySchema(schema: Schema, key: string): Schema {
  if (!schema || typeof schema !== 'object') return undefined;
  const props = schema.properties as Record<string, Schema> | undefined;
  if (props?.[key]) return props[key];
  for (const branch of ['anyOf', 'oneOf', 'allOf'] as const) {
    const list = schema[branch];
    if (Array.isArray(list)) {
      for (const b of list) {
        const found = propertySchema(b as Schema, key);
        if (found) return found;
      }
    }
  }
  return undefined;
}

function itemSchema(schema: Schema): Schema {
  const items = schema?.items;
  return items && typeof items === 'object' && !Array.isArray(items) ? (items as Schema) : undefined;
}

function cutString(text: string): string {
  const chars = Array.from(text);
  if (chars.length <= SUMMARY_STRING_MAX_CHARS) return text;
  return `${chars.slice(0, SUMMARY_STRING_MAX_CHARS).join('')}… (${chars.length} characters)`;
}

function summarise(value: unknown, schema: Schema, depth: number): unknown {
  if (isSecretSchema(schema)) return SECRET_PLACEHOLDER;
  if (typeof value === 'string') return cutString(value);
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) return '…';
  if (Array.isArray(value)) {
    const shown = value.slice(0, SUMMARY_ITEMS_MAX).map((v) => summarise(v, itemSchema(schema), depth + 1));
    return value.length > SUMMARY_ITEMS_MAX ? [...shown, `… (${value.length - SUMMARY_ITEMS_MAX} more)`] : shown;
  }
  const entries = Object.entries(value as Record<string, unknown>);
  const out: Record<string, unknown> = {};
  for (const [key, v] of entries.slice(0, SUMMARY_ITEMS_MAX)) {
    const sub = propertySchema(schema, key);
    out[key] = SECRET_NAME.test(key) && typeof v !== 'boolean' && v !== null ? SECRET_PLACEHOLDER : summarise(v, sub, depth + 1);
  }
  if (entries.length > SUMMARY_ITEMS_MAX) out['…'] = `${entries.length - SUMMARY_ITEMS_MAX} more`;
  return out;
}

/** The arguments as a person should see them: secrets replaced, long values cut, deep values elided. */
export function summariseArguments(args: Record<string, unknown>, schema: Record<string, unknown> | undefined): Record<string, unknown> {
  return summarise(args ?? {}, schema, 0) as Record<string, unknown>;
}

export function approvalSummary(
  tool: string,
  account: string | null,
  args: Record<string, unknown>,
  schema: Record<string, unknown> | undefined,
): ApprovalSummary {
  return { tool, account, arguments: summariseArguments(args, schema) };
}
