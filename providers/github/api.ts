import { readJson } from '../http.js';
import type { ToolContext } from '../sdk.js';

/** The REST API version every request pins (https://docs.github.com/rest/about-the-rest-api/api-versions). */
const API_VERSION = '2022-11-28';

export type Query = Record<string, string | number | boolean | undefined>;

/** `?a=1&b=2` from the defined entries of `query`, or '' when there are none. */
export function queryString(query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, String(value));
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** `/repos/{owner}/{repo}` with both parts escaped. */
export const repoPath = (owner: string, repo: string) => `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}`;

/** A file path inside a repository, each segment escaped and the slashes kept. */
export const filePath = (path: string) =>
  path
    .split('/')
    .filter((s) => s.length > 0)
    .map(encodeURIComponent)
    .join('/');

/** One GitHub REST call: JSON in and out, the recommended media type and API version. */
export async function githubRequest<T>(ctx: ToolContext, method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/vnd.github+json', 'x-github-api-version': API_VERSION };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await ctx.fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return (await readJson(res)) as T;
}
