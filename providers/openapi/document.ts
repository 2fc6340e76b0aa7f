import { parse as parseYaml } from 'yaml';

/**
 * An OpenAPI 3.0/3.1 document as the loader reads it: parsed (JSON or YAML), its size and nesting
 * bounded, its version checked, and its local `$ref`s followed on demand with the place of every
 * problem named (`paths./repos/{owner}/{repo}.get.parameters[2]: $ref #/components/parameters/per-page
 * does not resolve`). Nothing here reaches the network or the file system.
 */

export const DOCUMENT_LIMITS = {
  /** Characters of document text read at most (GitHub's whole REST API is 13 MB of JSON). */
  chars: 64 * 1024 * 1024,
  /** Nesting of objects and arrays in the document. */
  depth: 200,
  /** `$ref`s followed one after another before the chain counts as a loop. */
  refHops: 32,
  /** YAML aliases expanded (a "billion laughs" document stops here). */
  yamlAliases: 1000,
} as const;

/** A problem with the document, at a place in it (`where`, '' for the whole document). */
export class OpenApiError extends Error {
  readonly code = 'invalid_openapi';
  constructor(
    readonly where: string,
    readonly problem: string,
  ) {
    super(where ? `${where}: ${problem}` : problem);
    this.name = 'OpenApiError';
  }
}

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface OpenApiDocument {
  /** `3.0` or `3.1`: 3.0 schemas are turned into JSON Schema (nullable, example) when inlined. */
  version: '3.0' | '3.1';
  root: JsonObject;
}

/** Parses document text (JSON, or YAML when it does not start with `{`) and checks its shape and version. */
export function parseDocument(text: string): OpenApiDocument {
  if (text.length > DOCUMENT_LIMITS.chars) throw new OpenApiError('', `the document is larger than ${DOCUMENT_LIMITS.chars} characters`);
  let root: unknown;
  const trimmed = text.trimStart();
  try {
    root = trimmed.startsWith('{')
      ? JSON.parse(trimmed)
      : parseYaml(trimmed, { maxAliasCount: DOCUMENT_LIMITS.yamlAliases, prettyErrors: false, uniqueKeys: false });
  } catch (err) {
    throw new OpenApiError('', `not valid ${trimmed.startsWith('{') ? 'JSON' : 'YAML'} (${(err as Error).message.slice(0, 160)})`);
  }
  checkDepth(root);
  if (!isObject(root)) throw new OpenApiError('', 'the document is not an object');
  if (typeof root.swagger === 'string') {
    throw new OpenApiError(
      'swagger',
      `Swagger ${root.swagger} is not read; convert the document to OpenAPI 3 first (e.g. with swagger2openapi)`,
    );
  }
  if (typeof root.openapi !== 'string') throw new OpenApiError('openapi', 'missing: expected "3.0.x" or "3.1.x"');
  const version = /^3\.([01])(\.|$)/.exec(root.openapi);
  if (!version) throw new OpenApiError('openapi', `"${root.openapi.slice(0, 20)}" is not supported (OpenAPI 3.0 and 3.1 are)`);
  if (!isObject(root.paths)) throw new OpenApiError('paths', 'missing: expected an object of paths');
  return { version: version[1] === '0' ? '3.0' : '3.1', root };
}

/** Refuses a document nested deeper than DOCUMENT_LIMITS.depth (walked without recursion). */
function checkDepth(value: unknown): void {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth >= DOCUMENT_LIMITS.depth) throw new OpenApiError('', `the document is nested more than ${DOCUMENT_LIMITS.depth} levels deep`);
    for (const child of Array.isArray(v) ? v : Object.values(v))
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
  }
}

/** `a.b[2]`: a place in the document, as error messages name it. */
export function place(base: string, key: string | number): string {
  return typeof key === 'number' ? `${base}[${key}]` : base ? `${base}.${key}` : key;
}

/** The value a local JSON pointer (`#/components/schemas/repo`) names, or undefined. */
function pointerTarget(root: JsonObject, ref: string): Json | undefined {
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return undefined;
  let current: Json | undefined = root;
  for (const raw of ref.slice(2).split('/')) {
    let token: string;
    try {
      token = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    } catch {
      return undefined;
    }
    if (Array.isArray(current)) current = /^\d+$/.test(token) ? current[Number(token)] : undefined;
    else if (isObject(current)) current = Object.hasOwn(current, token) ? current[token] : undefined;
    else return undefined;
    if (current === undefined) return undefined;
  }
  return current;
}

/**
 * `value` with its `$ref` followed (a chain of them too), or the value itself. Only local
 * references are followed; an external one, one that names nothing, or a loop is an
 * OpenApiError at `where`.
 */
export function deref(doc: OpenApiDocument, value: Json | undefined, where: string): Json | undefined {
  let current = value;
  const seen = new Set<string>();
  while (isObject(current) && typeof current.$ref === 'string') {
    const ref = current.$ref;
    if (!ref.startsWith('#')) throw new OpenApiError(where, `$ref ${ref.slice(0, 200)} is not local (only #/… references are followed)`);
    if (seen.has(ref) || seen.size >= DOCUMENT_LIMITS.refHops) throw new OpenApiError(where, `$ref ${ref.slice(0, 200)} refers to itself`);
    seen.add(ref);
    const target = pointerTarget(doc.root, ref);
    if (target === undefined) throw new OpenApiError(where, `$ref ${ref.slice(0, 200)} does not resolve`);
    current = target;
  }
  return current;
}

/** Keywords of OpenAPI 3.0 schema objects that JSON Schema has not, or that say nothing to a checker. */
const DROPPED_KEYWORDS = new Set(['nullable', 'example', 'examples', 'xml', 'externalDocs', 'discriminator', '$schema', '$id', 'x-github']);

export interface InlineOptions {
  /** Schema nesting kept; deeper subschemas become `{}` (anything). */
  maxDepth: number;
  /** Subschema nodes written into one tool's schema before the rest become `{}`. */
  maxNodes: number;
}

/**
 * A JSON Schema with every local `$ref` copied in (the tool's input schema is self-contained): a
 * reference back into a schema being copied (a recursive type) and anything past the bounds
 * becomes `{}`, which accepts any value (the service still checks it). OpenAPI 3.0's `nullable`
 * becomes a `"null"` type; `example`, `xml` and similar documentation keywords are dropped.
 */
export function inlineSchema(doc: OpenApiDocument, schema: Json | undefined, where: string, options: InlineOptions): JsonObject {
  let nodes = 0;
  const walk = (value: Json | undefined, at: string, depth: number, open: Set<string>): Json => {
    if (!isObject(value)) return Array.isArray(value) ? value.map((v, i) => walk(v, place(at, i), depth + 1, open)) : (value ?? {});
    if (++nodes > options.maxNodes || depth > options.maxDepth) return {};
    if (typeof value.$ref === 'string') {
      const ref = value.$ref;
      if (open.has(ref)) return {};
      const target = deref(doc, value, at);
      const next = new Set(open).add(ref);
      const copied = walk(target, at, depth, next);
      // 3.1 allows siblings next to $ref (a description): they are kept over the target's.
      const siblings = Object.fromEntries(Object.entries(value).filter(([k]) => k === 'description' || k === 'title'));
      return isObject(copied) ? { ...copied, ...siblings } : copied;
    }
    const out: JsonObject = {};
    for (const [key, child] of Object.entries(value)) {
      if (DROPPED_KEYWORDS.has(key) || key.startsWith('x-')) continue;
      if (key === 'properties' || key === 'patternProperties' || key === '$defs' || key === 'definitions' || key === 'dependentSchemas') {
        if (!isObject(child)) continue;
        const copied: JsonObject = {};
        for (const [name, sub] of Object.entries(child)) {
          // Past the bound every subschema is `{}`: a schema of 100,000 of them would be megabytes
          // saying nothing, so the whole object accepts anything instead.
          if (nodes >= options.maxNodes) return {};
          copied[name] = walk(sub, place(place(at, key), name), depth + 1, open);
        }
        out[key] = copied;
      } else if (key === 'enum' || key === 'const' || key === 'default' || key === 'required' || key === 'type') {
        out[key] = child;
      } else if (typeof child === 'object' && child !== null) {
        out[key] = walk(child, place(at, key), depth + 1, open);
      } else {
        out[key] = child;
      }
    }
    if (doc.version === '3.0' && value.nullable === true) {
      if (typeof out.type === 'string') out.type = [out.type, 'null'];
      else if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    }
    // 3.0's boolean exclusiveMinimum/Maximum are JSON Schema's numeric ones.
    for (const [flag, bound] of [
      ['exclusiveMinimum', 'minimum'],
      ['exclusiveMaximum', 'maximum'],
    ] as const) {
      if (typeof out[flag] !== 'boolean') continue;
      if (out[flag] === true && typeof out[bound] === 'number') {
        out[flag] = out[bound];
        delete out[bound];
      } else delete out[flag];
    }
    return out;
  };
  const result = walk(schema, where, 0, new Set());
  return isObject(result) ? result : {};
}
