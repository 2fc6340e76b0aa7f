/**
 * Request paths built from agents' arguments. An argument that lands in a URL path must stay one
 * segment (or, for a file path, a run of ordinary segments): `encodeURIComponent` leaves `.` and
 * `..` alone and `new URL` resolves them, so `path: "../pulls/1/merge"` would otherwise turn a file
 * write into a merge. Every value is checked and escaped here; literal parts are the provider's own.
 *
 *   apiPath`/repos/${segment('owner', owner)}/${segment('repo', repo)}/contents/${segments('path', path)}`
 */

/** An argument that cannot be put in a request path; answered as `invalid_arguments` naming it. */
export class UnsafePathArgument extends Error {
  readonly code = 'invalid_arguments';
  constructor(
    readonly argument: string,
    readonly reason: string,
  ) {
    super(`${argument}: ${reason}`);
    this.name = 'UnsafePathArgument';
  }
}

/** A checked, escaped piece of a path; only apiPath accepts it (a plain string there is a type error). */
class PathPart {
  /** @internal use segment() or segments() */
  constructor(readonly escaped: string) {}
}

// Dots that WHATWG URL parsing, or a server that decodes once more, would treat as `.`/`..`;
// also with a `;parameter` after them, which Tomcat-style servers strip before resolving (`..;/`).
const DOT_SEGMENT = /^(\.|%2e){1,2}(;.*)?$/i;
// Separators a server may honour after decoding: `/`, `\`, and their percent-encoded forms.
const SEPARATOR = /[/\\]|%(2f|5c)/i;
// Control characters (CR/LF, NUL...) have no business in a path and confuse some servers.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point
const CONTROL = /[\u0000-\u001f\u007f]/;

/** Why `value` cannot be one path segment, or undefined when it can. */
function unsafeBecause(value: string): string | undefined {
  if (value.length === 0) return 'must not be empty';
  return hiddenTraversal(value);
}

/**
 * Why a non-empty segment could move a request elsewhere once decoded (a dot segment, a separator
 * or a control character, as written or encoded once or twice), or undefined. The tool context
 * asks this of every segment of every URL it sends (providers/sdk/api-base.ts), whoever built it.
 */
export function hiddenTraversal(value: string): string | undefined {
  for (const form of decodings(value)) {
    if (DOT_SEGMENT.test(form.trim())) return 'must not be "." or ".." (or an encoded form of them)';
    if (SEPARATOR.test(form)) return 'must not contain "/" or "\\" (or an encoded form of them)';
    if (CONTROL.test(form)) return 'must not contain control characters';
  }
  return undefined;
}

/** The value as written, percent-decoded up to twice (servers and proxies that decode again), and NFKC-folded. */
function decodings(value: string): string[] {
  const forms = [value, value.normalize('NFKC')];
  let current = value;
  for (let i = 0; i < 2; i++) {
    let next: string;
    try {
      next = decodeURIComponent(current);
    } catch {
      break; // a lone `%` is escaped as `%25` and stays literal
    }
    if (next === current) break;
    forms.push(next, next.normalize('NFKC'));
    current = next;
  }
  return forms;
}

/** One path segment from argument `argument`; numbers are taken as they are (integers only). */
export function segment(argument: string, value: string | number): PathPart {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new UnsafePathArgument(argument, 'must be a whole number');
    return new PathPart(String(value));
  }
  const why = unsafeBecause(value);
  if (why) throw new UnsafePathArgument(argument, why);
  return new PathPart(encodeURIComponent(value));
}

/**
 * A slash-separated value such as a file path in a repository: each segment is checked and
 * escaped, the slashes kept. A leading or trailing slash is dropped; an empty, `.` or `..`
 * segment anywhere is refused. An empty value gives an empty part (the root).
 */
export function segments(argument: string, value: string): PathPart {
  const trimmed = value.replace(/^\//, '').replace(/\/$/, '');
  if (trimmed === '') return new PathPart('');
  if (trimmed.includes('\\')) throw new UnsafePathArgument(argument, 'must use "/" between segments, not "\\"');
  const parts = trimmed.split('/').map((part) => {
    const why = unsafeBecause(part);
    if (why) throw new UnsafePathArgument(argument, `every segment between slashes ${why}`);
    return encodeURIComponent(part);
  });
  return new PathPart(parts.join('/'));
}

/** A path from literal parts and checked parts; the literals are the provider's own text. */
export function apiPath(literals: TemplateStringsArray, ...parts: PathPart[]): string {
  let path = literals[0];
  parts.forEach((part, i) => {
    if (!(part instanceof PathPart)) throw new TypeError('apiPath takes only segment() or segments() values');
    path += part.escaped + literals[i + 1];
  });
  return path;
}
