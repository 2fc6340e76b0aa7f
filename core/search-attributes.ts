import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/**
 * Search attributes operators filter on in Temporal UI. They are never encrypted, so they carry
 * ids and outcomes only — never a secret.
 */
export const SA = {
  tenant: defineSearchAttributeKey('SwitchboardTenant', SearchAttributeType.KEYWORD),
  user: defineSearchAttributeKey('SwitchboardUser', SearchAttributeType.KEYWORD),
  integration: defineSearchAttributeKey('SwitchboardIntegration', SearchAttributeType.KEYWORD),
  tool: defineSearchAttributeKey('SwitchboardTool', SearchAttributeType.KEYWORD_LIST),
  outcome: defineSearchAttributeKey('SwitchboardOutcome', SearchAttributeType.KEYWORD),
} as const;

/**
 * Temporal refuses a start whose search attribute value is over 2 KB (the list counts as one
 * value), failing the whole batch. The tool list stays far below: at most this many names…
 */
export const MAX_TOOL_ATTRIBUTE_NAMES = 20;
/** …and this many bytes of names in all. */
export const MAX_TOOL_ATTRIBUTE_BYTES = 1024;

/**
 * The `SwitchboardTool` values of a batch: each known name once, in order, bounded in count and
 * size. Unknown names never go in (they are whatever an agent typed; their calls answer "Tool not
 * found" on their own), and names past the bounds are left out rather than failing the start.
 */
export function toolAttributeValues(names: readonly string[], isKnown: (name: string) => boolean): string[] {
  const values: string[] = [];
  let bytes = 0;
  for (const name of new Set(names)) {
    if (values.length >= MAX_TOOL_ATTRIBUTE_NAMES) break;
    if (!isKnown(name)) continue;
    const size = new TextEncoder().encode(name).length + 3; // quotes and comma in the encoded list
    if (bytes + size > MAX_TOOL_ATTRIBUTE_BYTES) continue;
    values.push(name);
    bytes += size;
  }
  return values;
}

/** `--search-attribute` values for `temporal server start-dev`. */
export const SEARCH_ATTRIBUTE_FLAGS: string[] = Object.values(SA).map(
  (key) => `${key.name}=${key.type === SearchAttributeType.KEYWORD_LIST ? 'KeywordList' : 'Keyword'}`,
);

/** The attributes of a connection workflow, set when it starts (pending). */
export const connectionSearchAttributes = (caller: { tenantId: string; userId: string }, integration: string) => [
  { key: SA.tenant, value: caller.tenantId },
  { key: SA.user, value: caller.userId },
  { key: SA.integration, value: integration },
  { key: SA.outcome, value: 'PENDING' },
];
