/**
 * Upstream tool names as Switchboard's names: `[a-z][a-z0-9_]*`, at most TOOL_NAME_MAX_CHARS,
 * unique within the server (a second `Get-Issue` / `get_issue` becomes `get_issue_2`).
 */
const TOOL_NAME_MAX_CHARS = 64;

export function sanitizeToolName(upstream: string): string {
  let name = upstream
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_')
    .replace(/_+/g, '_')
    .replace(/^_+|_+$/g, '');
  if (!/^[a-z]/.test(name)) name = `t_${name}`.replace(/_+$/, '');
  return name.slice(0, TOOL_NAME_MAX_CHARS).replace(/_+$/, '');
}

/** Sanitised names for `upstreamNames`, in order, each unique (suffix `_2`, `_3`, … on a clash). */
export function uniqueToolNames(upstreamNames: readonly string[]): string[] {
  const taken = new Set<string>();
  return upstreamNames.map((upstream) => {
    const base = sanitizeToolName(upstream);
    let name = base;
    for (let n = 2; taken.has(name); n++) {
      const suffix = `_${n}`;
      name = `${base.slice(0, TOOL_NAME_MAX_CHARS - suffix.length)}${suffix}`;
    }
    taken.add(name);
    return name;
  });
}
