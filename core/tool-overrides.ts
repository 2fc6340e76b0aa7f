/**
 * A tenant administrator's per-tool overrides (`toolOverrides` in the tenant's settings): by
 * pattern over qualified tool names, `never-ask` (no approval, whatever the tool's access or
 * `approvalTools`), `always-ask` (approval for every call) or `read-only` (the tool counts as
 * reading, for this tenant, wherever access matters: approval of destructive tools, the `access`
 * search shows, agent workflows repeating a rate-limited read). An administrator may downgrade a
 * tool its server marks destructive: servers mark reads destructive too (an unannotated MCP tool
 * is destructive by the spec's default; Notion's `API-post-search` and most of Playwright MCP's
 * tools are marked so), and the administrator answers for their organisation's tools. Pure.
 */
import { comparableToolName, matchesPattern, type TenantSettings, type ToolOverrideMode } from './policy.js';

/** The names a tool is called by: `notion_api_post_search` (search_tools) and `notion__api_post_search` (connections_search). */
export interface NamedTool<A extends string = string> {
  tool: { name: string; access: A };
  flatName: string;
  qualifiedName: string;
}

/**
 * The override that decides for this tool, or undefined. A pattern matches the tool's flat or
 * qualified name, case aside and with `-` and `_` alike (so `notion_API-post-search` names the
 * tool Switchboard lists as `notion_api_post_search`). Of several that match, the most specific
 * decides — the one with the most characters besides `*` (an exact name beats any pattern) — and
 * of equally specific ones, the first listed.
 */
export function toolOverrideFor(settings: TenantSettings, entry: NamedTool): ToolOverrideMode | undefined {
  const overrides = settings.toolOverrides;
  if (!overrides?.length) return undefined;
  const names = [comparableToolName(entry.flatName), comparableToolName(entry.qualifiedName)];
  let best: { mode: ToolOverrideMode; specificity: number } | undefined;
  for (const { pattern, mode } of overrides) {
    const comparable = comparableToolName(pattern);
    if (!names.some((name) => matchesPattern(comparable, name))) continue;
    const specificity = comparable.replace(/\*/g, '').length;
    if (!best || specificity > best.specificity) best = { mode, specificity };
  }
  return best?.mode;
}

/** The tool's access for this tenant: `read` when an override treats it as read-only, else what the tool says. */
export function toolAccessFor<A extends string>(settings: TenantSettings, entry: NamedTool<A>): A | 'read' {
  return toolOverrideFor(settings, entry) === 'read-only' ? 'read' : entry.tool.access;
}
