import { z } from 'zod';
import { ProviderHttpError, readJson } from '../../sdk/http.js';
import type { ToolContext } from '../../sdk/index.js';
import { apiPath, segment } from '../../sdk/url-path.js';

/** An Atlassian site the connection may use (GET /oauth/token/accessible-resources). */
interface AtlassianSite {
  id: string;
  url: string;
  name: string;
  scopes?: string[];
}

export const cloudIdArg = z
  .string()
  .min(1)
  .optional()
  .describe('Atlassian site (cloud) id; omit it to use the first Jira site this connection can reach');

/** The sites the token reaches, Jira ones first (a token may also reach Confluence sites). */
export async function accessibleSites(ctx: ToolContext): Promise<AtlassianSite[]> {
  const sites = (await readJson(await ctx.fetch('/oauth/token/accessible-resources'))) as AtlassianSite[];
  const isJira = (s: AtlassianSite) => (s.scopes ?? []).some((scope) => scope.includes('jira'));
  return [...sites.filter(isJira), ...sites.filter((s) => !isJira(s))];
}

/** `cloudId` when given, else the first site's id. */
export async function resolveCloudId(ctx: ToolContext, cloudId: string | undefined): Promise<string> {
  if (cloudId) return cloudId;
  const [site] = await accessibleSites(ctx);
  if (!site) throw new ProviderHttpError(404, 'This Atlassian connection cannot reach any Jira site');
  return site.id;
}

/**
 * One Jira Cloud platform REST v3 call through the OAuth gateway,
 * `{apiBase}/ex/jira/{cloudId}/rest/api/3{path}`. Answers 204 No Content as null.
 */
export async function jiraRequest<T>(
  ctx: ToolContext,
  cloudId: string | undefined,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  const site = await resolveCloudId(ctx, cloudId);
  const headers: Record<string, string> = body === undefined ? {} : { 'content-type': 'application/json' };
  const res = await ctx.fetch(`${apiPath`/ex/jira/${segment('cloudId', site)}/rest/api/3`}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return (await readJson(res)) as T;
}

/** `/issue/{key}`, the key (argument `issueKey`) a checked single segment. */
export const issuePath = (issueKey: string) => apiPath`/issue/${segment('issueKey', issueKey)}`;

export const issueKeyArg = z.string().min(1).describe('Issue key such as "PROJ-123" (or the numeric issue id)');
