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
