import type { Config } from '../../core/config.js';

/**
 * Remote and composite sources: other Switchboard instances listed in SWITCHBOARD_SOURCES
 * answer connections_search and connections_execute beside this one. Then every tool name and
 * account id carries a `<source>:` prefix, a search merges all sources (naming the ones that
 * failed or timed out in `unavailable`), and an execution is routed by its prefix. A remote
 * source acts as the user of its API key there.
 */

export type Source = Config['SWITCHBOARD_SOURCES'][number];

interface SearchAnswer {
  ok: boolean;
  results?: { name: string; accounts?: { id: string }[] }[];
}

export const hasRemoteSources = (config: Config) => config.SWITCHBOARD_SOURCES.length > 0;

const prefixed = (source: string, value: string) => `${source}:${value}`;

/** `eu:github__list_repos` → { source: 'eu', rest: 'github__list_repos' } when `eu` is a source. */
export function splitSource(config: Config, value: string): { source: string; rest: string } | undefined {
  const at = value.indexOf(':');
  if (at <= 0) return undefined;
  const source = value.slice(0, at);
  const known = source === config.SOURCE_NAME || config.SWITCHBOARD_SOURCES.some((s) => s.name === source);
  return known ? { source, rest: value.slice(at + 1) } : undefined;
}

async function callSource(source: Source, tool: string, args: unknown, timeoutMs: number): Promise<unknown> {
  const res = await fetch(`${source.url.replace(/\/$/, '')}/v1/tools/${tool}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${source.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(args),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const body = (await res.json().catch(() => undefined)) as { ok?: boolean } | undefined;
  // The agent surface answers its own failures as bodies ({ok: false, …}); anything else is the source failing.
  if (body && typeof body.ok === 'boolean') return body;
  throw new Error(`source ${source.name} answered HTTP ${res.status}`);
}

function prefixSearch(source: string, answer: SearchAnswer) {
  return (answer.results ?? []).map((r) => ({
    ...r,
    name: prefixed(source, r.name),
    ...(r.accounts && { accounts: r.accounts.map((a) => ({ ...a, id: prefixed(source, a.id) })) }),
  }));
}

/** Merges this instance's ranked results with each source's, taking each source's best in turn. */
export async function compositeSearch(
  config: Config,
  args: { query: string; provider?: string; limit: number },
  searchHere: () => Promise<SearchAnswer>,
) {
  const unavailable: string[] = [];
  const lists = await Promise.all([
    searchHere().then((answer) => prefixSearch(config.SOURCE_NAME, answer)),
    ...config.SWITCHBOARD_SOURCES.map((source) =>
      callSource(source, 'connections_search', args, config.SOURCE_TIMEOUT_MS).then(
        (answer) => prefixSearch(source.name, answer as SearchAnswer),
        () => {
          unavailable.push(source.name);
          return [];
        },
      ),
    ),
  ]);
  const merged: unknown[] = [];
  for (let rank = 0; merged.length < args.limit && lists.some((l) => rank < l.length); rank++) {
    for (const list of lists) if (rank < list.length && merged.length < args.limit) merged.push(list[rank]);
  }
  return { ok: true, results: merged, ...(unavailable.length ? { unavailable } : {}) };
}

/** Routes a call by its `<source>:` prefix: here, or to the source that owns the tool. */
export async function compositeExecute(
  config: Config,
  args: { name: string; arguments: Record<string, unknown>; account?: string; requestId?: string },
  executeHere: (args: { name: string; arguments: Record<string, unknown>; account?: string; requestId?: string }) => Promise<unknown>,
) {
  const target = splitSource(config, args.name);
  if (!target) {
    return {
      ok: false,
      error: {
        code: 'not_found',
        message: `No tool is named ${args.name}; names here carry a source prefix, <source>:<provider>__<tool>.`,
      },
    };
  }
  const account = args.account ? splitSource(config, args.account) : undefined;
  if (args.account && account?.source !== target.source) {
    return { ok: false, error: { code: 'not_connected', message: `No account "${args.account}" of source ${target.source} is yours.` } };
  }
  const routed = { ...args, name: target.rest, account: account?.rest };
  if (target.source === config.SOURCE_NAME) return executeHere(routed);
  const source = config.SWITCHBOARD_SOURCES.find((s) => s.name === target.source)!;
  try {
    // A tool call may run up to its deadline at the source.
    return await callSource(source, 'connections_execute', routed, config.CONNECTIONS_TOOL_TIMEOUT_MS + 30_000);
  } catch (err) {
    return { ok: false, error: { code: 'tool_failed', message: `Source ${source.name} is unavailable: ${(err as Error).message}` } };
  }
}
