import { ProviderHttpError, readJson } from '../../sdk/http.js';
import type { ToolContext } from '../../sdk/index.js';
import { rateLimitWait } from '../../sdk/rate-limit.js';

/**
 * Linear's GraphQL API (https://linear.app/developers/graphql): every call is a POST to
 * `/graphql` with `{query, variables}`. Linear refuses a bad key with HTTP 401 and an
 * `AUTHENTICATION_ERROR`; other failures may arrive as HTTP 200 with an `errors` array. Both
 * become ProviderHttpErrors, a refused key always as 401, so callers treat them like any other
 * provider's errors.
 */

interface GraphqlError {
  message?: string;
  extensions?: { code?: string; type?: string; statusCode?: number; userPresentableMessage?: string };
}

const AUTH_CODES = new Set(['AUTHENTICATION_ERROR', 'UNAUTHENTICATED']);

/** The HTTP status an `errors` array stands for: 401 for a refused key, else Linear's own or 400. */
export function linearErrorStatus(errors: readonly GraphqlError[]): number {
  if (errors.some((e) => AUTH_CODES.has(e.extensions?.code ?? '') || e.extensions?.type === 'authentication error')) return 401;
  if (errors.some((e) => e.extensions?.code === 'RATELIMITED' || e.extensions?.type === 'ratelimited')) return 429;
  if (errors.some((e) => e.extensions?.type === 'forbidden' || e.extensions?.code === 'FORBIDDEN')) return 403;
  return errors.find((e) => typeof e.extensions?.statusCode === 'number')?.extensions?.statusCode ?? 400;
}

/** One GraphQL operation; answers its `data`. Arguments always travel as variables, never spliced into the query. */
export async function linearGraphql<T>(ctx: ToolContext, query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const defined = Object.fromEntries(Object.entries(variables).filter(([, v]) => v !== undefined));
  const res = await ctx.fetch('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables: defined }),
  });
  let body: { data?: T | null; errors?: GraphqlError[] } | null;
  try {
    body = (await readJson(res)) as typeof body;
  } catch (err) {
    if (err instanceof ProviderHttpError) {
      // A 4xx carrying an authentication error is a refused key, whatever status the edge chose;
      // one carrying RATELIMITED is a rate limit, timed by Linear's reset headers.
      const errors = parseErrors(err.body);
      const status = errors && linearErrorStatus(errors);
      if (status === 401 || status === 429) throw new ProviderHttpError(status, err.body, rateLimitWait(status, res.headers));
    }
    throw err;
  }
  if (body?.errors?.length) {
    const status = linearErrorStatus(body.errors);
    throw new ProviderHttpError(status, JSON.stringify({ errors: body.errors }), rateLimitWait(status, res.headers));
  }
  if (!body?.data) throw new ProviderHttpError(502, 'Linear answered without data');
  return body.data;
}

function parseErrors(text: string): GraphqlError[] | undefined {
  try {
    const parsed = JSON.parse(text) as { errors?: unknown };
    return Array.isArray(parsed?.errors) ? (parsed.errors as GraphqlError[]) : undefined;
  } catch {
    return undefined;
  }
}
