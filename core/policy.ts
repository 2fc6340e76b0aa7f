/**
 * Tenant policy: which providers and tools a caller may use. Pure functions, so the same rules
 * serve search, execute and the portal.
 */

import { z } from 'zod';
import { policyRefusalAnswer } from './policy-refusal-text.js';

/** A tool name or pattern over unqualified tool names: letters, digits, `_`, `-` and `*`. */
export const toolPatternSchema = z
  .string()
  .regex(/^[A-Za-z0-9_*-]+$/, 'expected a non-empty pattern of letters, digits, _, - and *')
  .max(128, 'expected a pattern of at most 128 characters (tool names have at most 64)');

/**
 * Patterns one list of a tenant's settings may hold. Every search and every call of the tenant
 * matches each tool it considers against each pattern, on the shared event loop: 1,000 patterns
 * of many `*` against 1,000 tools took 0.9 s per search.
 */
export const TOOL_PATTERNS_MAX = 100;
const toolPatternsSchema = z.array(toolPatternSchema).max(TOOL_PATTERNS_MAX, `expected at most ${TOOL_PATTERNS_MAX} patterns`);

/** A role name: letters, digits, `_`, `-`, `.` and `:`. */
export const roleNameSchema = z.string().regex(/^[A-Za-z0-9_.:-]+$/, 'expected a non-empty role name of letters, digits, _, -, . and :');

/** What a tool override does (core/tool-overrides.ts): never ask for approval, always ask, or treat the tool as read-only. */
export const TOOL_OVERRIDE_MODES = ['never-ask', 'always-ask', 'read-only'] as const;
export type ToolOverrideMode = (typeof TOOL_OVERRIDE_MODES)[number];
/** At most this many tool overrides per tenant, each pattern at most this long: every search and call reads them. */
export const TOOL_OVERRIDES_MAX = 100;
export const TOOL_OVERRIDE_PATTERN_MAX_CHARS = 200;

/** One override: a pattern over qualified tool names (`notion_api_post_search`, `playwright_browser_*`) and its mode. */
export const toolOverrideSchema = z.strictObject({
  pattern: z
    .string()
    .max(TOOL_OVERRIDE_PATTERN_MAX_CHARS, `expected a pattern of at most ${TOOL_OVERRIDE_PATTERN_MAX_CHARS} characters`)
    .regex(/^[A-Za-z0-9_*-]+$/, 'expected a non-empty pattern over qualified tool names: letters, digits, _, - and *'),
  mode: z.enum(TOOL_OVERRIDE_MODES, { error: `expected one of ${TOOL_OVERRIDE_MODES.join(', ')}` }),
});
export type ToolOverride = z.infer<typeof toolOverrideSchema>;

/** The pattern as it is compared: case aside, `-` and `_` alike (upstream names are kept as `a_b` for `A-B`). */
export const comparableToolName = (name: string): string => name.toLowerCase().replace(/-/g, '_');

const toolOverridesSchema = z
  .array(toolOverrideSchema)
  .max(TOOL_OVERRIDES_MAX, `expected at most ${TOOL_OVERRIDES_MAX} tool overrides`)
  .superRefine((overrides, ctx) => {
    const seen = new Set<string>();
    overrides.forEach((o, i) => {
      const key = comparableToolName(o.pattern);
      if (seen.has(key)) ctx.addIssue({ code: 'custom', path: [i, 'pattern'], message: 'this pattern is listed twice' });
      seen.add(key);
    });
  });

/** A tenant's settings, as stored in `tenants.settings`. An absent key places no restriction. */
export const tenantSettingsSchema = z.strictObject({
  /** Providers the tenant enabled. Absent: every registered provider is enabled. */
  enabledProviders: z.array(z.string().min(1, 'expected a provider name')).optional(),
  /** When set, only these unqualified tool names (or patterns) are allowed. */
  allowedTools: toolPatternsSchema.optional(),
  /** When not empty, a tool must match one of these patterns. */
  includeTools: toolPatternsSchema.optional(),
  /** A tool matching any of these patterns is hidden and refused. */
  excludeTools: toolPatternsSchema.optional(),
  /** Roles that may use connections at all. Absent: every user may. */
  connectionRoles: z.array(roleNameSchema).optional(),
  /** A tool matching any of these patterns needs a person's approval before it runs (core/approval-policy.ts). */
  approvalTools: toolPatternsSchema.optional(),
  /** Every tool marked destructive needs approval. Absent: true. */
  approveDestructive: z.boolean().optional(),
  /** Per-tool overrides of approval and access, by pattern over qualified tool names (core/tool-overrides.ts). */
  toolOverrides: toolOverridesSchema.optional(),
  /** Who may approve: role names, and `self` for the caller themself. Absent: `self` and `admin`. */
  approverRoles: z.array(roleNameSchema).min(1, 'expected at least one approver role (or self)').optional(),
  /** Who approves calls on organisation accounts (default: approverRoles); without `self`, never the caller. */
  orgApproverRoles: z.array(roleNameSchema).min(1, 'expected at least one approver role (or self)').optional(),
  /** How long an approval waits for a decision, in seconds (at most 30 days). Absent: 24 hours. */
  approvalTtlSec: z
    .number()
    .int()
    .min(1)
    .max(30 * 24 * 3600, 'expected at most 30 days (2592000 s)')
    .optional(),
});

export type TenantSettings = z.infer<typeof tenantSettingsSchema>;

/**
 * `*` matches any run of characters; everything else is literal. Matched without a regular
 * expression: a pattern of many `*` would make a backtracking one take exponential time (seconds
 * for `*a*a*a*a*a*a*b` against 64 characters), on every search and call of the tenant.
 */
export function matchesPattern(pattern: string, name: string): boolean {
  const [first, ...rest] = pattern.split('*');
  if (!rest.length) return pattern === name;
  const last = rest.pop() as string;
  if (!name.startsWith(first) || name.length < first.length + last.length || !name.endsWith(last)) return false;
  // Each middle piece at its earliest place after the previous one: if any placement fits, this one does.
  let at = first.length;
  const end = name.length - last.length;
  for (const piece of rest) {
    const found = name.indexOf(piece, at);
    if (found < 0 || found + piece.length > end) return false;
    at = found + piece.length;
  }
  return true;
}

export const matchesAny = (patterns: readonly string[], name: string) => patterns.some((p) => matchesPattern(p, name));

export function isProviderEnabled(settings: TenantSettings, provider: string): boolean {
  return settings.enabledProviders === undefined || settings.enabledProviders.includes(provider);
}

export function isToolAllowed(settings: TenantSettings, toolName: string): boolean {
  if (settings.allowedTools !== undefined && !matchesAny(settings.allowedTools, toolName)) return false;
  if (settings.includeTools?.length && !matchesAny(settings.includeTools, toolName)) return false;
  if (settings.excludeTools?.length && matchesAny(settings.excludeTools, toolName)) return false;
  return true;
}

export function hasConnectionRole(settings: TenantSettings, roles: readonly string[]): boolean {
  const required = settings.connectionRoles;
  return required === undefined || required.some((r) => roles.includes(r));
}

/**
 * The whole tenant policy for one tool: a connection role, the provider enabled, the tool allowed.
 * Search, execute and calls routed to a remote source all ask this.
 */
export function policyAdmits(settings: TenantSettings, roles: readonly string[], provider: string, toolName: string): boolean {
  return policyRefusal(settings, roles, provider, toolName) === undefined;
}

/** Which rule of the tenant policy refuses a tool, or undefined when it is admitted. */
export function policyRefusal(
  settings: TenantSettings,
  roles: readonly string[],
  provider: string,
  toolName: string,
): 'role' | 'provider' | 'tool' | undefined {
  if (!hasConnectionRole(settings, roles)) return 'role';
  if (!isProviderEnabled(settings, provider)) return 'provider';
  if (!isToolAllowed(settings, toolName)) return 'tool';
  return undefined;
}

/** An organisation account admits a caller when one of the caller's roles is in its sharing list. */
export function sharingAdmits(sharingRoles: readonly string[], roles: readonly string[]): boolean {
  return sharingRoles.some((r) => r === '*' || roles.includes(r));
}

/** The role of an organisation's administrators: only they add organisation accounts. */
export const ADMIN_ROLE = 'admin';

/**
 * Why a user with `roles` may not connect `provider` (for the organisation when `forOrganisation`),
 * or undefined when they may: the connection role, the provider enabled, and for an organisation
 * account the administrator role. The one rule every step of a connection applies (connect, the
 * connect link, the OAuth callback, cookie capture, the API-key form), each with roles read fresh.
 */
export function connectRefusal(
  settings: TenantSettings,
  roles: readonly string[],
  provider: string,
  forOrganisation: boolean,
): string | undefined {
  // Worded as a refused tool call is (core/policy-refusal-text.ts), so a user reads one sentence for one rule.
  if (!hasConnectionRole(settings, roles)) return policyRefusalAnswer('role', provider, provider).message;
  if (!isProviderEnabled(settings, provider)) return policyRefusalAnswer('provider', provider, provider).message;
  if (forOrganisation && !roles.includes(ADMIN_ROLE)) return 'Only an administrator can connect an organisation account.';
  return undefined;
}
