import { segment, UnsafePathArgument } from '../sdk/url-path.js';
import type { OperationSpec, ParameterSpec } from './operations.js';

/**
 * One operation's request from an agent's (already validated) arguments. The path template's
 * literal text is the document's; each path argument is one segment, checked and escaped by
 * url-path.ts's `segment` (no `..`, `/`, `\` or an encoded form of them), so no argument can move
 * the request off its operation's path. Query values are serialised per `style`/`explode`;
 * headers are only those the document declares (operations.ts leaves out Authorization, Cookie,
 * Host and the transport's own); the body is JSON.
 */

interface BuiltRequest {
  /** The path and query below the API base, e.g. `/repos/octocat/hello/issues?state=open`. */
  path: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
}

type Scalar = string | number | boolean;
const isScalar = (v: unknown): v is Scalar => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

function scalarText(spec: ParameterSpec, value: unknown): string {
  if (isScalar(value)) return String(value);
  if (value === null) return '';
  throw new UnsafePathArgument(spec.argument, 'must be a string, number or boolean here');
}

/** A path parameter's text: a scalar, or an array/object per style `simple` (the only one this reads), each part checked. */
function pathValue(spec: ParameterSpec, value: unknown): string {
  if (spec.json) return segment(spec.argument, JSON.stringify(value)).escaped;
  if (typeof value === 'number' && !Number.isSafeInteger(value)) return segment(spec.argument, String(value)).escaped;
  if (isScalar(value)) return segment(spec.argument, typeof value === 'boolean' ? String(value) : value).escaped;
  if (Array.isArray(value)) return value.map((v) => segment(spec.argument, scalarText(spec, v)).escaped).join(',');
  if (value && typeof value === 'object') {
    const parts = Object.entries(value).map(([k, v]) =>
      spec.explode
        ? `${segment(spec.argument, k).escaped}=${segment(spec.argument, scalarText(spec, v)).escaped}`
        : `${segment(spec.argument, k).escaped},${segment(spec.argument, scalarText(spec, v)).escaped}`,
    );
    return parts.join(',');
  }
  throw new UnsafePathArgument(spec.argument, 'must not be empty');
}

const enc = encodeURIComponent;

/** `name=value` pairs of one query parameter per its style and explode. */
function queryPairs(spec: ParameterSpec, value: unknown): string[] {
  const name = enc(spec.name);
  if (spec.json) return [`${name}=${enc(JSON.stringify(value))}`];
  if (isScalar(value) || value === null) return [`${name}=${enc(scalarText(spec, value))}`];
  if (Array.isArray(value)) {
    const items = value.map((v) => enc(scalarText(spec, v)));
    if (spec.explode && spec.style === 'form') return items.map((v) => `${name}=${v}`);
    const separator = spec.style === 'spaceDelimited' ? '%20' : spec.style === 'pipeDelimited' ? '|' : ',';
    return [`${name}=${items.join(separator)}`];
  }
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    if (spec.style === 'deepObject') return entries.map(([k, v]) => `${name}%5B${enc(k)}%5D=${enc(scalarText(spec, v))}`);
    if (spec.explode) return entries.map(([k, v]) => `${enc(k)}=${enc(scalarText(spec, v))}`);
    return [`${name}=${entries.map(([k, v]) => `${enc(k)},${enc(scalarText(spec, v))}`).join(',')}`];
  }
  return [];
}

function headerValue(spec: ParameterSpec, value: unknown): string {
  const text = spec.json
    ? JSON.stringify(value)
    : Array.isArray(value)
      ? value.map((v) => scalarText(spec, v)).join(',')
      : value && typeof value === 'object'
        ? Object.entries(value)
            .map(([k, v]) => (spec.explode ? `${k}=${scalarText(spec, v)}` : `${k},${scalarText(spec, v)}`))
            .join(',')
        : scalarText(spec, value);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: a header value with CR, LF or NUL is refused
  if (/[\u0000-\u001f\u007f]/.test(text)) throw new UnsafePathArgument(spec.argument, 'must not contain control characters');
  return text;
}

export function buildRequest(op: OperationSpec, args: Record<string, unknown>): BuiltRequest {
  const byName = new Map(op.parameters.filter((p) => p.in === 'path').map((p) => [p.name, p]));
  // The template's literal parts are the document's own; `{name}` is replaced by the checked value.
  let path = '';
  let last = 0;
  for (const match of op.path.matchAll(/\{([^}]*)\}/g)) {
    path += op.path.slice(last, match.index);
    const spec = byName.get(match[1]);
    const value = spec ? args[spec.argument] : undefined;
    if (!spec || value === undefined) throw new UnsafePathArgument(spec?.argument ?? match[1], 'is required');
    path += pathValue(spec, value);
    last = (match.index ?? 0) + match[0].length;
  }
  path += op.path.slice(last);

  const query: string[] = [];
  const headers: Record<string, string> = {};
  for (const spec of op.parameters) {
    const value = args[spec.argument];
    if (value === undefined) continue;
    if (spec.in === 'query') query.push(...queryPairs(spec, value));
    else if (spec.in === 'header') headers[spec.name] = headerValue(spec, value);
  }
  let body: string | undefined;
  if (op.body && args[op.body.argument] !== undefined) {
    body = JSON.stringify(args[op.body.argument]);
    headers['content-type'] = op.body.mediaType;
  }
  return { path: query.length ? `${path}?${query.join('&')}` : path, method: op.method.toUpperCase(), headers, body };
}
