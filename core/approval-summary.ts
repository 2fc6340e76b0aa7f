/**
 * What a person sees of a call before approving it: the tool, the account and the arguments —
 * with every secret argument's value replaced and long values cut, so the summary can be shown
 * on a page, answered to the agent and kept in a database row without carrying a secret. Pure.
 */

import { isSecretName } from './secret-names.js';

/** Shown instead of a secret argument's value. */
export const SECRET_PLACEHOLDER = '[secret]';
/** A string longer than this many characters is cut (with an ellipsis and its length). */
const SUMMARY_STRING_MAX_CHARS = 300;
/** At most this many items of an array, or keys of an object, are shown. */
const SUMMARY_ITEMS_MAX = 20;
/** Deeper values are shown as `…`. */
const MAX_DEPTH = 4;

export interface ApprovalSummary {
  /** Qualified tool name. */
  tool: string;
  /** The account the call runs on (its label), or null for a built-in tool that needs none. */
  account: string | null;
  arguments: Record<string, unknown>;
}

type Schema = Record<string, unknown> | undefined;

/** `$ref`s followed at most this deep (a schema may refer to itself). */
const MAX_REF_DEPTH = 8;

/** A local `$ref` (`#/$defs/X`, `#/definitions/X`, any JSON pointer into the root), resolved; other refs stay as they are. */
function resolved(schema: Schema, root: Schema, depth = 0): Schema {
  const ref = schema?.$ref;
  if (typeof ref !== 'string' || !ref.startsWith('#') || depth >= MAX_REF_DEPTH) return schema;
  let target: unknown = root;
  for (const part of ref.slice(1).split('/').filter(Boolean)) {
    const key = decodeURIComponent(part).replace(/~1/g, '/').replace(/~0/g, '~');
    target = target && typeof target === 'object' ? (target as Record<string, unknown>)[key] : undefined;
  }
  return target && typeof target === 'object' ? resolved(target as Schema, root, depth + 1) : undefined;
}

/**
 * What the walk below learns of a schema, kept per root schema (a tool's schema object lives as long
 * as its listing): the walk visits every value of the arguments, and an upstream's schema may give
 * each value ~200 branches (providers/remote-mcp/schema-cost.ts), so working a schema's branches
 * out again for every value cost 0.5 s of the worker for 5,000 values. Keyed by subschema, and by a
 * member's name only where the schema names it, so agents' arguments never grow these.
 */
interface Learned {
  branches: WeakMap<object, Schema[]>;
  secret: WeakMap<object, boolean>;
  member: WeakMap<object, Map<string, { schema: Schema }>>;
  /** The member names (`p:name`, `i:index`) a schema's branches name. */
  names: WeakMap<object, Set<string>>;
}
const learnedByRoot = new WeakMap<object, Learned>();
/** Stands for every member name (or item position) a schema does not name: they share one answer. */
const ANY_MEMBER = '\u0000any';

/** The value `map` holds for `key`, made (and kept) on first use. */
function remembered<K, V>(map: { get(key: K): V | undefined; set(key: K, value: V): unknown }, key: K, make: () => V): V {
  const known = map.get(key);
  if (known !== undefined) return known;
  const made = make();
  map.set(key, made);
  return made;
}

function learned(root: Schema): Learned | undefined {
  if (!root) return undefined;
  return remembered(learnedByRoot, root, () => ({
    branches: new WeakMap(),
    secret: new WeakMap(),
    member: new WeakMap(),
    names: new WeakMap(),
  }));
}

/**
 * `find()` for a member of `schema`, remembered under the member's name when one of the schema's
 * branches names it (`names`: the names it has, learned once), else under ANY_MEMBER.
 */
function memberSchema(schema: Schema, root: Schema, member: string, names: (b: Schema) => string[], find: () => Schema): Schema {
  const known = learned(root);
  if (!known || !schema) return find();
  const named = remembered(known.names, schema, () => new Set(branches(schema, root).flatMap(names)));
  const bySchema = remembered(known.member, schema, () => new Map<string, { schema: Schema }>());
  // Boxed: a member may have no schema (undefined), which is an answer too.
  return remembered(bySchema, named.has(member) ? member : ANY_MEMBER, () => ({ schema: find() })).schema;
}

/** The schemas a value must (allOf) or may (anyOf, oneOf) match, its own included. */
function branches(schema: Schema, root: Schema): Schema[] {
  const known = learned(root);
  return schema && known ? remembered(known.branches, schema, () => branchesOf(schema, root)) : branchesOf(schema, root);
}

function branchesOf(schema: Schema, root: Schema, depth = 0): Schema[] {
  const own = resolved(schema, root);
  if (!own || typeof own !== 'object' || depth >= MAX_REF_DEPTH) return own ? [own] : [];
  const out: Schema[] = [own];
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const list = own[key];
    if (Array.isArray(list)) for (const b of list) out.push(...branchesOf(b as Schema, root, depth + 1));
  }
  return out;
}

/**
 * Whether a JSON Schema marks a value secret: `"x-secret": true` (Switchboard's marking; a zod
 * field gets it with `.meta({ 'x-secret': true })`), JSON Schema's `writeOnly: true`, or
 * `format: "password"` — on the schema itself, behind a local `$ref`, or on any of its
 * anyOf/oneOf/allOf branches (`Optional[SecretStr]`, a nullable secret): when unsure, redact.
 */
function isSecretSchema(schema: unknown, root?: unknown): boolean {
  if (!schema || typeof schema !== 'object') return false;
  const r = (root ?? schema) as Schema;
  const find = () =>
    branches(schema as Schema, r).some((s) => !!s && (s['x-secret'] === true || s.writeOnly === true || s.format === 'password'));
  const known = learned(r);
  return known ? remembered(known.secret, schema, find) : find();
}

/** The schema of property `key` of an object schema: `properties`, `patternProperties`, `additionalProperties`, through every branch. */
function propertySchema(schema: Schema, root: Schema, key: string): Schema {
  if (!schema) return undefined;
  const names = (b: Schema) => (b?.properties && typeof b.properties === 'object' ? Object.keys(b.properties).map((k) => `p:${k}`) : []);
  return memberSchema(schema, root, `p:${key}`, names, () => findPropertySchema(schema, root, key));
}

function findPropertySchema(schema: Schema, root: Schema, key: string): Schema {
  const candidates: Schema[] = [];
  for (const b of branches(schema, root)) {
    const props = b?.properties as Record<string, Schema> | undefined;
    if (props && Object.hasOwn(props, key)) candidates.push(props[key]);
    // Pattern properties are not matched (their expressions are the service's); any secret one counts.
    const patterns = b?.patternProperties as Record<string, Schema> | undefined;
    if (patterns) candidates.push(...Object.values(patterns));
    const extra = b?.additionalProperties;
    if (extra && typeof extra === 'object') candidates.push(extra as Schema);
  }
  return candidates.find((c) => isSecretSchema(c, root)) ?? candidates[0];
}

/** The schema of item `index` of an array schema: `prefixItems` / tuple `items`, else `items`, through every branch. */
function itemSchema(schema: Schema, root: Schema, index: number): Schema {
  if (!schema) return undefined;
  const names = (b: Schema) => {
    const prefix = Array.isArray(b?.prefixItems) ? b.prefixItems : Array.isArray(b?.items) ? b.items : [];
    return prefix.map((_: unknown, i: number) => `i:${i}`);
  };
  return memberSchema(schema, root, `i:${index}`, names, () => findItemSchema(schema, root, index));
}

function findItemSchema(schema: Schema, root: Schema, index: number): Schema {
  const candidates: Schema[] = [];
  for (const b of branches(schema, root)) {
    const prefix = Array.isArray(b?.prefixItems) ? b.prefixItems : Array.isArray(b?.items) ? b.items : undefined;
    if (prefix && index < prefix.length) candidates.push(prefix[index] as Schema);
    const items = b?.items;
    if (items && typeof items === 'object' && !Array.isArray(items)) candidates.push(items as Schema);
    const extra = b?.additionalItems;
    if (extra && typeof extra === 'object') candidates.push(extra as Schema);
  }
  return candidates.find((c) => isSecretSchema(c, root)) ?? candidates[0];
}

/** Sets `key` as an own property, whatever its name (`__proto__` included): nothing of the call is hidden from the person. */
function put(out: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
}

function cutString(text: string): string {
  const chars = Array.from(text);
  if (chars.length <= SUMMARY_STRING_MAX_CHARS) return text;
  return `${chars.slice(0, SUMMARY_STRING_MAX_CHARS).join('')}… (${chars.length} characters)`;
}

/** What stands in for a secret value: the placeholder, or (sealedArguments) the value sealed. */
type SecretReplacer = (value: unknown) => unknown;
const placeholder: SecretReplacer = () => SECRET_PLACEHOLDER;

/** `cut`: the summary (long values cut, deep values elided); without, every non-secret value as it is. */
function redact(value: unknown, schema: Schema, root: Schema, depth: number, cut: boolean, secret: SecretReplacer = placeholder): unknown {
  if (isSecretSchema(schema, root)) return secret(value);
  if (typeof value === 'string') return cut ? cutString(value) : value;
  if (value === null || typeof value !== 'object') return value;
  if (cut && depth >= MAX_DEPTH) return '…';
  if (Array.isArray(value)) {
    const kept = cut ? value.slice(0, SUMMARY_ITEMS_MAX) : value;
    const shown = kept.map((v, i) => redact(v, itemSchema(schema, root, i), root, depth + 1, cut, secret));
    return cut && value.length > SUMMARY_ITEMS_MAX ? [...shown, `… (${value.length - SUMMARY_ITEMS_MAX} more)`] : shown;
  }
  const entries = Object.entries(value as Record<string, unknown>);
  const out: Record<string, unknown> = {};
  for (const [key, v] of cut ? entries.slice(0, SUMMARY_ITEMS_MAX) : entries) {
    const shownKey = cut ? cutString(key) : key;
    const secretByName = isSecretName(key) && typeof v !== 'boolean' && v !== null;
    put(out, shownKey, secretByName ? secret(v) : redact(v, propertySchema(schema, root, key), root, depth + 1, cut, secret));
  }
  if (cut && entries.length > SUMMARY_ITEMS_MAX) put(out, '…', `${entries.length - SUMMARY_ITEMS_MAX} more`);
  return out;
}

/**
 * The arguments in full as the approval page shows them: every value that will run, but each
 * secret one replaced (what a person approves is exactly what runs, secrets aside).
 */
export function redactedArguments(args: Record<string, unknown>, schema: Record<string, unknown> | undefined): Record<string, unknown> {
  return redact(args ?? {}, schema, schema, 0, false) as Record<string, unknown>;
}

/**
 * The arguments with every value the schema (or its name) marks secret replaced by `seal(value)`:
 * what a tool batch's workflow input carries, so that decoding its history (an operator in
 * Temporal UI) never shows a secret argument. The same walk as redactedArguments.
 */
export function sealedArguments(
  args: Record<string, unknown>,
  schema: Record<string, unknown> | undefined,
  seal: (value: unknown) => unknown,
): Record<string, unknown> {
  return redact(args ?? {}, schema, schema, 0, false, seal) as Record<string, unknown>;
}

/** Shorter secret arguments are not redacted from answers: a short value (a count, a word under a key that only looks secret, `bypass`) would mangle them. */
const SECRET_ARGUMENT_MIN_CHARS = 8;

/**
 * The text of every secret argument (each string of at least SECRET_ARGUMENT_MIN_CHARS inside a
 * value the schema or its name marks secret): redacted from what a call answers, should the service
 * echo one back in an error or result.
 */
export function secretArgumentTexts(args: Record<string, unknown>, schema: Record<string, unknown> | undefined): string[] {
  const texts: string[] = [];
  const collect = (value: unknown): void => {
    if (typeof value === 'string') {
      if (value.length >= SECRET_ARGUMENT_MIN_CHARS) texts.push(value);
    } else if (value && typeof value === 'object') Object.values(value).forEach(collect);
  };
  sealedArguments(args, schema, (value) => {
    collect(value);
    return value;
  });
  return texts;
}

/** The arguments as a person should see them: secrets replaced, long values cut, deep values elided. */
export function summariseArguments(args: Record<string, unknown>, schema: Record<string, unknown> | undefined): Record<string, unknown> {
  return redact(args ?? {}, schema, schema, 0, true) as Record<string, unknown>;
}

export function approvalSummary(
  tool: string,
  account: string | null,
  args: Record<string, unknown>,
  schema: Record<string, unknown> | undefined,
): ApprovalSummary {
  return { tool, account, arguments: summariseArguments(args, schema) };
}
