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

/** `path: message; path: message` — names every argument that is wrong. */
export function formatIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues.map((issue) => `${issue.path.length ? issue.path.join('.') : '(arguments)'}: ${issue.message}`).join('; ');
}
