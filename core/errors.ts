import type { z } from 'zod';

/**
 * A meta-tool answer that is an error. `body` is what the caller reads (the spec's exact
 * shapes, such as `{ error: "Unknown connectionId" }`); `status` is the HTTP status the JSON
 * API answers with. MCP returns the same body as a tool result.
 */
export class MetaToolError extends Error {
  constructor(
    readonly body: { error: unknown } & Record<string, unknown>,
    readonly status = 400,
    /** HTTP headers the JSON API sends with it (e.g. Retry-After on a 429). */
    readonly headers: Record<string, string> = {},
  ) {
    super(typeof body.error === 'string' ? body.error : JSON.stringify(body.error));
    this.name = 'MetaToolError';
  }
}

/** `path: message; path: message` — names every argument that is wrong (the first MAX_REPORTED_ISSUES of them). */
export function formatIssues(issues: readonly z.core.$ZodIssue[]): string {
  return reportedIssues(issues)
    .map((issue) => `${issue.path.length ? issue.path.join('.') : '(arguments)'}: ${issue.message}`)
    .join('; ');
}

/** Problems named per set of arguments; the rest are counted in one more entry. */
const MAX_REPORTED_ISSUES = 20;
const ISSUE_MESSAGE_MAX_CHARS = 300;
const PATH_PART_MAX_CHARS = 100;
const PATH_MAX_PARTS = 20;

/**
 * The issues of arguments that do not fit a schema, as reported to the caller: the first 20, each
 * message and path cut, then `and N more problems`. A megabyte of wrong items used to make a
 * megabyte-sized answer per item (through Temporal, over its payload limit: the call was then
 * answered as interrupted, outcome unknown); an argument name of 60,000 characters, a message as long.
 */
export function reportedIssues(
  issues: readonly { path: readonly PropertyKey[]; message: string }[],
): { path: (string | number)[]; message: string }[] {
  const cut = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);
  const shown = issues.slice(0, MAX_REPORTED_ISSUES).map((issue) => ({
    path: issue.path.slice(0, PATH_MAX_PARTS).map((p) => (typeof p === 'number' ? p : cut(String(p), PATH_PART_MAX_CHARS))),
    message: cut(issue.message, ISSUE_MESSAGE_MAX_CHARS),
  }));
  if (issues.length > MAX_REPORTED_ISSUES) shown.push({ path: [], message: `and ${issues.length - MAX_REPORTED_ISSUES} more problems` });
  return shown;
}
