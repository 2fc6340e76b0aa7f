import type { ToolAccess } from '../sdk/index.js';
import {
  deref,
  type InlineOptions,
  inlineSchema,
  isObject,
  type Json,
  type JsonObject,
  type OpenApiDocument,
  OpenApiError,
  place,
} from './document.js';

/**
 * The operations of an OpenAPI document as tool specifications: a stable name, a description, an
 * input JSON Schema and how each argument goes into the request. Pure: building requests and
 * running them is request.ts and provider.ts.
 */

const OPERATION_LIMITS = {
  /** Operations read from one document (GitHub's REST API has about 1,200). */
  operations: 5000,
  /** A tool's description, at most. */
  descriptionChars: 1000,
  /** Schema nesting copied into an input schema; deeper is `{}`. */
  schemaDepth: 12,
  /** Schema nodes copied into one input schema; past it, `{}`. */
  schemaNodes: 4000,
  /** Tool names (without the integration's prefix), at most. */
  nameChars: 64,
} as const;

export const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
type Method = (typeof METHODS)[number];

/** Headers no argument sets, whatever the document declares (OpenAPI ignores Accept, Content-Type and Authorization parameters too). */
const FORBIDDEN_HEADERS = new Set([
  'authorization',
  'cookie',
  'host',
  'accept',
  'content-type',
  'content-length',
  'transfer-encoding',
  'connection',
  'proxy-authorization',
]);

type ParameterIn = 'path' | 'query' | 'header';

/** One argument that goes into the URL or a header. */
export interface ParameterSpec {
  /** The argument's name in the tool's input (the parameter's, or `<in>_<name>` when two share one). */
  argument: string;
  name: string;
  in: ParameterIn;
  style: string;
  explode: boolean;
  /** Sent as JSON text (a parameter described by `content` rather than `schema`). */
  json: boolean;
}

export interface OperationSpec {
  /** The tool's name within the integration (snake_case, unique). */
  name: string;
  operationId?: string;
  method: Method;
  /** The path template, e.g. `/repos/{owner}/{repo}`. */
  path: string;
  tags: string[];
  description: string;
  access: ToolAccess;
  inputSchema: JsonObject;
  parameters: ParameterSpec[];
  /** The argument holding the JSON body, and its media type. */
  body?: { argument: string; mediaType: string };
}

interface ConvertResult {
  operations: OperationSpec[];
  /** Operations left out (and why), for the log and the robustness sweep. */
  refused: { operation: string; reason: string }[];
}

interface Selection {
  include?: readonly string[];
  exclude?: readonly string[];
  /** Access by operationId or tool name, over the method's default. */
  access?: Readonly<Record<string, ToolAccess>>;
}

/** `repos/get-content` → `repos_get_content`; `listPetsByID` → `list_pets_by_id`. */
export function snakeName(text: string): string {
  const name = text
    .normalize('NFKD')
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  const start = /^[a-z]/.test(name) ? name : `op_${name}`.replace(/_+$/, '');
  return start.slice(0, OPERATION_LIMITS.nameChars).replace(/_+$/, '');
}

/** The name of an operation without an operationId: method and path, `{id}` as `by_id` (`GET /users/{id}/posts` → `get_users_by_id_posts`). */
export function nameFromPath(method: string, path: string): string {
  return snakeName(`${method}_${path.replace(/\{([^}]*)\}/g, 'by_$1')}`);
}

/** `*` any run of characters, `?` one; the whole text must match. */
function globMatches(pattern: string, text: string): boolean {
  const source = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${source}$`, 'i').test(text);
}

/** The texts a selection pattern may match: the operationId, the tool name, `tag:<tag>` and `METHOD /path`. */
function selectionKeys(op: Pick<OperationSpec, 'operationId' | 'name' | 'tags' | 'method' | 'path'>): string[] {
  return [...(op.operationId ? [op.operationId] : []), op.name, ...op.tags.map((t) => `tag:${t}`), `${op.method.toUpperCase()} ${op.path}`];
}

function isSelected(op: Parameters<typeof selectionKeys>[0], selection: Selection): boolean {
  const keys = selectionKeys(op);
  const any = (patterns: readonly string[]) => patterns.some((p) => keys.some((k) => globMatches(p, k)));
  if (selection.include && !any(selection.include)) return false;
  return !(selection.exclude && any(selection.exclude));
}

/** Markdown as plain text: links and images as their text, no emphasis, code marks, headings or HTML; whitespace folded. */
export function markdownText(markdown: string): string {
  return markdown
    .replace(/```[^\n]*\n([\s\S]*?)```/g, '$1')
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]{0,200}>/g, '')
    .replace(/^\s{0,3}#{1,6}\s+/gm, '')
    .replace(/^\s{0,3}>\s?/gm, '')
    .replace(/(\*\*|__)(.+?)\1/g, '$2')
    .replace(/(^|[\s(])[*_]([^*_\n]+)[*_]/g, '$1$2')
    .replace(/`([^`]*)`/g, '$1')
    .replace(/&(amp|lt|gt|quot|#39);/g, (_m, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[e] ?? '')
    .replace(/\s+/g, ' ')
    .trim();
}

function describe(summary: unknown, description: unknown, method: string, path: string): string {
  const parts = [
    typeof summary === 'string' ? markdownText(summary) : '',
    typeof description === 'string' ? markdownText(description) : '',
  ];
  const [first, second] = parts;
  const text = second && second !== first ? (first ? `${first.replace(/\.?$/, '.')} ${second}` : second) : first;
  const line = `${text ? `${text} ` : ''}(${method.toUpperCase()} ${path})`;
  if (line.length <= OPERATION_LIMITS.descriptionChars) return line;
  const suffix = ` … (${method.toUpperCase()} ${path})`;
  return `${text.slice(0, Math.max(0, OPERATION_LIMITS.descriptionChars - suffix.length))}${suffix}`;
}

const accessOfMethod = (method: Method): ToolAccess =>
  method === 'get' || method === 'head' ? 'read' : method === 'delete' ? 'destructive' : 'write';

const isJsonMediaType = (type: string) => /^application\/(?:[\w.+-]+\+)?json(?:\s*;.*)?$/i.test(type.trim());

interface RawOperation {
  method: Method;
  path: string;
  operation: JsonObject;
  pathItem: JsonObject;
  where: string;
  name: string;
}

/** Every operation of the document in document order, with its unique tool name. */
function rawOperations(doc: OpenApiDocument): RawOperation[] {
  const found: Omit<RawOperation, 'name'>[] = [];
  const paths = doc.root.paths as JsonObject;
  for (const [path, rawItem] of Object.entries(paths)) {
    const itemWhere = place('paths', path);
    if (!path.startsWith('/')) throw new OpenApiError(itemWhere, 'a path must start with "/"');
    const pathItem = deref(doc, rawItem, itemWhere);
    if (!isObject(pathItem)) throw new OpenApiError(itemWhere, 'expected a path item object');
    for (const method of METHODS) {
      const operation = pathItem[method];
      if (operation === undefined) continue;
      const where = place(itemWhere, method);
      if (!isObject(operation)) throw new OpenApiError(where, 'expected an operation object');
      found.push({ method, path, operation, pathItem, where });
      if (found.length > OPERATION_LIMITS.operations)
        throw new OpenApiError('paths', `more than ${OPERATION_LIMITS.operations} operations`);
    }
  }
  // Names are given over the whole document, before any selection, so including or excluding
  // operations never renames another: the first (in document order) keeps the plain name, later
  // ones that map to it get `_2`, `_3`, ….
  const taken = new Set<string>();
  return found.map((op) => {
    const id = op.operation.operationId;
    const base = typeof id === 'string' && snakeName(id) ? snakeName(id) : nameFromPath(op.method, op.path);
    let name = base;
    for (let n = 2; taken.has(name); n++) name = `${base.slice(0, OPERATION_LIMITS.nameChars - String(n).length - 1)}_${n}`;
    taken.add(name);
    return { ...op, name };
  });
}

const INLINE: InlineOptions = { maxDepth: OPERATION_LIMITS.schemaDepth, maxNodes: OPERATION_LIMITS.schemaNodes };

/** Path-level parameters, overridden by the operation's own of the same name and place; keyed `in:name`. */
function mergedParameters(doc: OpenApiDocument, raw: RawOperation): Map<string, { param: JsonObject; at: string }> {
  const { path, operation, pathItem, where } = raw;
  const byKey = new Map<string, { param: JsonObject; at: string }>();
  for (const [list, listWhere] of [
    [pathItem.parameters, place(place('paths', path), 'parameters')],
    [operation.parameters, place(where, 'parameters')],
  ] as const) {
    if (list === undefined) continue;
    if (!Array.isArray(list)) throw new OpenApiError(listWhere, 'expected an array of parameters');
    list.forEach((item, i) => {
      const at = place(listWhere, i);
      const param = deref(doc, item, at);
      if (!isObject(param) || typeof param.name !== 'string' || typeof param.in !== 'string')
        throw new OpenApiError(at, 'expected a parameter object with a name and an "in"');
      byKey.set(`${param.in}:${param.name}`, { param, at });
    });
  }
  return byKey;
}

/** The operations `selection` picks, as tool specifications; a bad reference anywhere in one is an OpenApiError naming its place. */
export function convertOperations(doc: OpenApiDocument, selection: Selection = {}): ConvertResult {
  const operations: OperationSpec[] = [];
  const refused: ConvertResult['refused'] = [];
  for (const raw of rawOperations(doc)) {
    const { method, path, operation, where, name } = raw;
    const operationId = typeof operation.operationId === 'string' ? operation.operationId : undefined;
    const tags = Array.isArray(operation.tags) ? operation.tags.filter((t): t is string => typeof t === 'string') : [];
    if (!isSelected({ operationId, name, tags, method, path }, selection)) continue;
    const shown = operationId ?? `${method.toUpperCase()} ${path}`;

    const byKey = mergedParameters(doc, raw);

    const properties: JsonObject = {};
    const required: string[] = [];
    const parameters: ParameterSpec[] = [];
    const names = [...byKey.values()].map(({ param }) => param.name as string);
    let problem: string | undefined;
    for (const { param, at } of byKey.values()) {
      const name = param.name as string;
      const location = param.in as string;
      if (location === 'cookie') {
        if (param.required === true) problem = `needs the cookie parameter ${name}, which Switchboard never sends from arguments`;
        continue;
      }
      if (location !== 'path' && location !== 'query' && location !== 'header')
        throw new OpenApiError(place(at, 'in'), `"${location}" is not a parameter location`);
      if (location === 'header' && FORBIDDEN_HEADERS.has(name.toLowerCase())) continue;
      if (location === 'path' && !path.includes(`{${name}}`)) continue;
      const argument = names.filter((n) => n === name).length > 1 ? `${location}_${name}` : name;
      let json = false;
      let schemaSource: Json | undefined = param.schema;
      if (schemaSource === undefined && isObject(param.content)) {
        const [mediaType] = Object.values(param.content);
        schemaSource = isObject(mediaType) ? mediaType.schema : undefined;
        json = true;
      }
      const schema = inlineSchema(doc, schemaSource ?? {}, place(at, 'schema'), INLINE);
      const text = typeof param.description === 'string' ? markdownText(param.description).slice(0, 300) : '';
      properties[argument] = text && !schema.description ? { ...schema, description: text } : schema;
      if (location === 'path' || param.required === true) required.push(argument);
      const style = typeof param.style === 'string' ? param.style : location === 'query' ? 'form' : 'simple';
      const explode = typeof param.explode === 'boolean' ? param.explode : style === 'form';
      parameters.push({ argument, name, in: location, style, explode, json });
    }
    for (const template of path.matchAll(/\{([^}]*)\}/g)) {
      if (!parameters.some((p) => p.in === 'path' && p.name === template[1]))
        problem = `the path parameter {${template[1]}} is not declared`;
    }

    let body: OperationSpec['body'];
    if (operation.requestBody !== undefined) {
      const at = place(where, 'requestBody');
      const requestBody = deref(doc, operation.requestBody, at);
      if (!isObject(requestBody)) throw new OpenApiError(at, 'expected a request body object');
      const content = isObject(requestBody.content) ? requestBody.content : {};
      const mediaType = Object.keys(content).find(isJsonMediaType);
      if (mediaType) {
        const argument = properties.body === undefined ? 'body' : 'request_body';
        const media = content[mediaType];
        const schema = inlineSchema(
          doc,
          isObject(media) ? media.schema : {},
          place(place(place(at, 'content'), mediaType), 'schema'),
          INLINE,
        );
        const text = typeof requestBody.description === 'string' ? markdownText(requestBody.description).slice(0, 300) : '';
        properties[argument] = {
          ...schema,
          description: (schema.description as string | undefined) ?? (text || `The JSON request body (${mediaType})`),
        };
        if (requestBody.required === true) required.push(argument);
        body = { argument, mediaType };
      } else if (requestBody.required === true) {
        problem = `its request body is ${Object.keys(content).join(', ').slice(0, 100) || 'of no media type'}, not JSON`;
      }
    }
    if (problem) {
      refused.push({ operation: shown, reason: problem });
      continue;
    }
    const override = selection.access?.[operationId ?? ''] ?? selection.access?.[name];
    operations.push({
      name,
      operationId,
      method,
      path,
      tags,
      description: describe(operation.summary, operation.description, method, path),
      access: override ?? accessOfMethod(method),
      inputSchema: { type: 'object', properties, ...(required.length && { required }), additionalProperties: false },
      parameters,
      body,
    });
  }
  return { operations, refused };
}
