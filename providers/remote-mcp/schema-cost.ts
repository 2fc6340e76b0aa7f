/**
 * How much work checking arguments against an upstream's input schema can cost, worked out from
 * the schema alone. Switchboard validates arguments with ajv on the worker, synchronously: no
 * deadline can stop it. A hostile (or a tenant's own) server could list a schema of a few kilobytes
 * whose `anyOf` branches `$ref` the same definition twice, level after level; every branch fails
 * late, so one call costs 2^levels subschema visits (and as many errors), blocking the worker for
 * every tenant. Such a schema is refused here, before it is compiled, and its tool left out.
 *
 * The measure: for one value of the arguments at nesting depth d, the most subschemas that can be
 * applied to it. Keywords applying a subschema to the same value (`$ref`, `allOf`, `anyOf`, `not`,
 * `if`…) add up within a depth; keywords applying one to a member (`properties`, `items`…) lead to
 * the next depth. The count follows every path into the arguments (a named member, or any other)
 * up to MAX_ARGUMENT_DEPTH; arguments nested deeper, or with more values than MAX_CHECKS_PER_CALL
 * allows at the schema's cost, are refused before validation (argumentsTooCostly), so the bound
 * covers every call that is validated.
 */

/** Subschemas that may be applied to one value of the arguments, at most (an `enum` or `required` of 50 entries counts as one more). */
const MAX_VISITS_PER_VALUE = 200;
/** Arguments of an upstream tool nested deeper than this are refused before they are validated. */
const MAX_ARGUMENT_DEPTH = 32;
/**
 * Values × subschemas per value one call's arguments may cost to check (a subschema visit is a
 * fraction of a microsecond: this is well under a second of the worker's time). Arguments over it
 * are refused before validation: a megabyte of values against a schema of many branches.
 */
const MAX_CHECKS_PER_CALL = 1_000_000;
/** Distinct paths into the arguments the analysis follows before it calls the schema too complex. */
const MAX_PATHS_EXPLORED = 10_000;
/**
 * Subschemas the analysis itself may count (over every path) before it gives up: it runs on the
 * process that lists the server (the HTTP server, for search), so its own work is bounded too.
 * A graph of thirty definitions of thirty `$ref`s each took 2.8 s within the path bound alone;
 * at this bound the analysis of any schema takes 20–40 ms (measured: 64 KiB of flat properties,
 * about 12,000 steps, 20 ms).
 */
export const MAX_ANALYSIS_STEPS = 50_000;

/** Keywords whose subschemas apply to the value itself. */
const IN_PLACE_ONE = ['not', 'if', 'then', 'else'];
const IN_PLACE_LIST = ['allOf', 'anyOf', 'oneOf'];
const IN_PLACE_MAP = ['dependencies', 'dependentSchemas'];
/** Keywords whose subschemas apply to every member (property value, item, property name). */
const EVERY_MEMBER_ONE = [
  'additionalProperties',
  'propertyNames',
  'unevaluatedProperties',
  'additionalItems',
  'contains',
  'unevaluatedItems',
];
const EVERY_MEMBER_MAP = ['patternProperties'];
/** Keywords that move a `#/...` reference's base, or name a target other than a JSON pointer: not followed. */
const BASE_CHANGING = ['$id', 'id', '$anchor', '$dynamicAnchor', '$recursiveAnchor', '$dynamicRef', '$recursiveRef'];

type Schema = Record<string, unknown>;
const isSchema = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

interface Edges {
  /** Subschemas applied to the same value, once each per entry. */
  inPlace: Schema[];
  /** Subschemas applied to every member. */
  everyMember: Schema[];
  /** Subschemas applied to one named member (a property name, or a tuple position). */
  member: [string, Schema][];
}

/** The subschema a local JSON pointer (`#`, `#/…`) names, or undefined. */
function resolvePointer(root: Schema, ref: string): Schema | undefined {
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    let key: string;
    try {
      key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    } catch {
      return undefined;
    }
    if (!isSchema(node) && !Array.isArray(node)) return undefined;
    if (!Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return isSchema(node) ? node : undefined;
}

/** A visit, plus one per 50 entries of a list it compares the value with. */
function weight(s: Schema): number {
  const listed = (Array.isArray(s.enum) ? s.enum.length : 0) + (Array.isArray(s.required) ? s.required.length : 0);
  return 1 + Math.floor(listed / 50);
}

/** Each subschema's edges (found once, on first use), and the first reason a reference could not be followed. */
function schemaGraph(root: Schema): { edges: (s: Schema) => Edges; unresolved: () => string | undefined } {
  const edgesOf = new Map<Schema, Edges>();
  let unresolved: string | undefined;
  const edges = (s: Schema): Edges => {
    const known = edgesOf.get(s);
    if (known) return known;
    const e: Edges = { inPlace: [], everyMember: [], member: [] };
    edgesOf.set(s, e);
    for (const key of BASE_CHANGING) if (Object.hasOwn(s, key) && s !== root) unresolved ??= `it uses ${key}`;
    if (Object.hasOwn(s, '$ref')) {
      const target = typeof s.$ref === 'string' ? resolvePointer(root, s.$ref) : undefined;
      if (target) e.inPlace.push(target);
      else unresolved ??= `its $ref ${String(s.$ref).slice(0, 60)} is not a pointer into the schema`;
    }
    for (const key of IN_PLACE_ONE) if (isSchema(s[key])) e.inPlace.push(s[key] as Schema);
    for (const key of IN_PLACE_LIST) if (Array.isArray(s[key])) e.inPlace.push(...(s[key] as unknown[]).filter(isSchema));
    for (const key of IN_PLACE_MAP) if (isSchema(s[key])) e.inPlace.push(...Object.values(s[key] as Schema).filter(isSchema));
    for (const key of EVERY_MEMBER_ONE) if (isSchema(s[key])) e.everyMember.push(s[key] as Schema);
    for (const key of EVERY_MEMBER_MAP) if (isSchema(s[key])) e.everyMember.push(...Object.values(s[key] as Schema).filter(isSchema));
    if (isSchema(s.items)) e.everyMember.push(s.items);
    for (const key of ['items', 'prefixItems']) {
      if (!Array.isArray(s[key])) continue;
      (s[key] as unknown[]).forEach((item, i) => {
        if (isSchema(item)) e.member.push([String(i), item]);
      });
    }
    if (isSchema(s.properties)) {
      for (const [name, sub] of Object.entries(s.properties)) if (isSchema(sub)) e.member.push([name, sub]);
    }
    return e;
  };
  return { edges, unresolved: () => unresolved };
}

/**
 * The most subschema visits one value of the arguments can cost (at any depth up to
 * MAX_ARGUMENT_DEPTH), or why the schema could make validation too costly.
 */
export function schemaCost(
  root: Schema,
  maxSteps = MAX_ANALYSIS_STEPS,
): { perValue: number; steps: number } | { reason: string; steps: number } {
  const why = (reason: string) => ({ reason, steps });
  let perValue = 1;
  let steps = 0;
  const tooLong = `working out its cost takes more than ${maxSteps} steps`;
  const { edges, unresolved } = schemaGraph(root);

  /** Every subschema applied to a value reached at `entry`, with how many times (the in-place closure). */
  const expand = (entry: Map<Schema, number>): Map<Schema, number> | string => {
    // Order the in-place graph (depth first); a cycle would recurse without end.
    const order: Schema[] = [];
    const state = new Map<Schema, 'open' | 'done'>();
    const visit = (s: Schema): string | undefined => {
      const seen = state.get(s);
      if (seen === 'done') return undefined;
      if (seen === 'open') return 'a subschema applies itself to the same value (a $ref cycle)';
      state.set(s, 'open');
      for (const next of edges(s).inPlace) {
        const why = visit(next);
        if (why) return why;
      }
      state.set(s, 'done');
      order.push(s);
      return undefined;
    };
    for (const s of entry.keys()) {
      const why = visit(s);
      if (why) return why;
    }
    const counts = new Map<Schema, number>();
    steps += order.length;
    if (steps > maxSteps) return tooLong;
    for (const s of order.reverse()) {
      const n = (entry.get(s) ?? 0) + (counts.get(s) ?? 0);
      counts.set(s, n);
      if (n * weight(s) > MAX_VISITS_PER_VALUE) return tooMany;
      for (const next of edges(s).inPlace) counts.set(next, (counts.get(next) ?? 0) + n);
    }
    return counts;
  };
  const tooMany = `a value may be checked against more than ${MAX_VISITS_PER_VALUE} subschemas`;

  // Every path into the arguments, one member at a time (a named member, or any other member),
  // explored depth first; paths that meet the same subschemas at the same depth are explored once.
  const ids = new Map<Schema, number>();
  const keyOf = (depth: number, level: Map<Schema, number>) => {
    const parts: string[] = [];
    for (const [s, n] of level) {
      if (!ids.has(s)) ids.set(s, ids.size);
      parts.push(`${ids.get(s)}*${n}`);
    }
    return `${depth}:${parts.sort().join(',')}`;
  };
  const explored = new Set<string>();
  const add = (into: Map<Schema, number>, s: Schema, n: number) => into.set(s, (into.get(s) ?? 0) + n);
  const walk = (level: Map<Schema, number> | string, depth: number): string | undefined => {
    if (typeof level === 'string') return level;
    const unresolvable = unresolved();
    if (unresolvable) return unresolvable;
    let total = 0;
    steps += level.size;
    if (steps > maxSteps) return tooLong;
    for (const [s, n] of level) total += n * weight(s);
    if (total > MAX_VISITS_PER_VALUE) return tooMany;
    perValue = Math.max(perValue, total);
    if (depth === MAX_ARGUMENT_DEPTH || level.size === 0) return undefined;
    const key = keyOf(depth, level);
    if (explored.has(key)) return undefined;
    explored.add(key);
    if (explored.size > MAX_PATHS_EXPLORED) return `it has more than ${MAX_PATHS_EXPLORED} ways into the arguments`;
    // A member gets what every member gets, plus what its name (or position) gets.
    const every = new Map<Schema, number>();
    const named = new Map<string, Map<Schema, number>>();
    for (const [s, n] of level) {
      const e = edges(s);
      steps += e.everyMember.length + e.member.length;
      for (const sub of e.everyMember) add(every, sub, n);
      for (const [name, sub] of e.member) {
        if (!named.has(name)) named.set(name, new Map());
        add(named.get(name)!, sub, n);
      }
    }
    if (steps > maxSteps) return tooLong;
    for (const perName of [new Map<Schema, number>(), ...named.values()]) {
      const next = new Map(every);
      for (const [s, n] of perName) add(next, s, n);
      const why = walk(expand(next), depth + 1);
      if (why) return why;
    }
    return undefined;
  };
  const problem = walk(expand(new Map([[root, 1]])), 0);
  return problem ? why(problem) : { perValue, steps };
}

/**
 * Why arguments cannot be checked against a schema of `perValue` (schemaCost) within the bounds:
 * nested deeper than MAX_ARGUMENT_DEPTH, or more values than MAX_CHECKS_PER_CALL allows. Walked
 * without recursion (a deeply nested value would overflow the stack), stopping at the first excess.
 */
export function argumentsTooCostly(value: unknown, perValue: number): string | undefined {
  const maxValues = Math.floor(MAX_CHECKS_PER_CALL / perValue);
  const stack: [unknown, number][] = [[value, 0]];
  let values = 0;
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (++values > maxValues)
      return `arguments hold more than ${maxValues} values, more than Switchboard checks against this tool's schema`;
    if (typeof v !== 'object' || v === null) continue;
    if (depth >= MAX_ARGUMENT_DEPTH) return `arguments are nested more than ${MAX_ARGUMENT_DEPTH} levels deep`;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
  return undefined;
}
