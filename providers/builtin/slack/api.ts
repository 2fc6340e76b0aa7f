import { ProviderHttpError, readJson } from '../../sdk/http.js';
import type { ToolContext } from '../../sdk/index.js';
import { rateLimitWait } from '../../sdk/rate-limit.js';
import { apiPath, segment } from '../../sdk/url-path.js';

/**
 * Slack Web API calls (https://api.slack.com/web). Slack answers most failures with HTTP 200 and
 * `{ok:false, error}`; those become ProviderHttpErrors with an HTTP-like status and the error
 * code as body, so callers handle them like any other provider's errors.
 */

const STATUS_OF_ERROR: Record<string, number> = {
  not_authed: 401,
  invalid_auth: 401,
  token_revoked: 401,
  token_expired: 401,
  account_inactive: 401,
  missing_scope: 403,
  not_allowed_token_type: 403,
  no_permission: 403,
  not_in_channel: 403,
  restricted_action: 403,
  ekm_access_denied: 403,
  channel_not_found: 404,
  user_not_found: 404,
  users_not_found: 404,
  message_not_found: 404,
  thread_not_found: 404,
  ratelimited: 429,
  rate_limited: 429,
  internal_error: 500,
  fatal_error: 500,
  service_unavailable: 503,
};

export const slackErrorStatus = (error: string): number => STATUS_OF_ERROR[error] ?? 400;

type Params = Record<string, string | number | boolean | undefined>;

/**
 * Calls a Web API method: reads as GET with query arguments, writes as a JSON POST
 * (`Content-Type: application/json; charset=utf-8`, which Slack wants to see declared).
 */
export async function slackRequest<T>(ctx: ToolContext, method: string, params: Params, kind: 'read' | 'write'): Promise<T> {
  const defined = Object.entries(params).filter((e): e is [string, string | number | boolean] => e[1] !== undefined);
  let res: Response;
  if (kind === 'read') {
    const query = new URLSearchParams(defined.map(([k, v]) => [k, String(v)])).toString();
    res = await ctx.fetch(`${apiPath`/${segment('method', method)}`}${query ? `?${query}` : ''}`);
  } else {
    res = await ctx.fetch(apiPath`/${segment('method', method)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify(Object.fromEntries(defined)),
    });
  }
  const body = (await readJson(res)) as { ok?: boolean; error?: string } | null;
  if (!body?.ok) {
    const error = body?.error ?? 'unknown_error';
    const status = slackErrorStatus(error);
    throw new ProviderHttpError(status, error, rateLimitWait(status, res.headers));
  }
  return body as T;
}
