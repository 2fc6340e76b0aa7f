import { readJson } from '../../sdk/http.js';
import type { ToolContext } from '../../sdk/index.js';
import { apiPath, segment, segments } from '../../sdk/url-path.js';

/** The REST API version every request pins (https://docs.github.com/rest/about-the-rest-api/api-versions). */
const API_VERSION = '2022-11-28';

type Query = Record<string, string | number | boolean | undefined>;

/** `?a=1&b=2` from the defined entries of `query`, or '' when there are none. */
export function queryString(query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, String(value));
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** `/repos/{owner}/{repo}`, each a checked single segment (the arguments `owner` and `repo`). */
export const repoPath = (owner: string, repo: string) => apiPath`/repos/${segment('owner', owner)}/${segment('repo', repo)}`;

/** `/repos/{owner}/{repo}/contents/{path}`: the file path (argument `path`) checked segment by segment. */
export const contentsPath = (owner: string, repo: string, path: string) => {
  const file = segments('path', path);
  return `${repoPath(owner, repo)}${file.escaped ? apiPath`/contents/${file}` : '/contents'}`;
};

/** `/repos/{owner}/{repo}/{issues|pulls}/{number}`. */
export const numberedPath = (owner: string, repo: string, kind: 'issues' | 'pulls', n: number) =>
  `${repoPath(owner, repo)}${kind === 'issues' ? apiPath`/issues/${segment('issueNumber', n)}` : apiPath`/pulls/${segment('pullNumber', n)}`}`;

/** One GitHub REST call: JSON in and out, the recommended media type and API version. */
export async function githubRequest<T>(ctx: ToolContext, method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/vnd.github+json', 'x-github-api-version': API_VERSION };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await ctx.fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return (await readJson(res)) as T;
}

/**
 * One page of a repository's `issues`, `pulls` or `commits`: the tool's arguments besides owner,
 * repo and paging are GitHub's filters, passed on as they are named; each row is slimmed by `slim`.
 */
export async function listInRepo<T, Row>(
  ctx: ToolContext,
  collection: 'issues' | 'pulls' | 'commits',
  args: { owner: string; repo: string; perPage: number; page: number } & Query,
  slim: (item: T) => Row,
): Promise<Row[]> {
  const { owner, repo, perPage, page, ...filters } = args;
  const items = await githubRequest<T[]>(
    ctx,
    'GET',
    `${repoPath(owner, repo)}/${collection}${queryString({ ...filters, per_page: perPage, page })}`,
  );
  return items.map(slim);
}
