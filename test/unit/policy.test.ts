import { describe, expect, it } from 'vitest';
import {
  hasConnectionRole,
  isProviderEnabled,
  isToolAllowed,
  matchesPattern,
  sharingAdmits,
  TOOL_PATTERNS_MAX,
  tenantSettingsSchema,
} from '../../core/policy.js';

describe('policy', () => {
  it('matches * against any run of characters and nothing else as special', () => {
    expect(matchesPattern('ticket_*', 'ticket_create')).toBe(true);
    expect(matchesPattern('*_delete', 'repo_delete')).toBe(true);
    expect(matchesPattern('*_delete', 'repo_deleted')).toBe(false);
    expect(matchesPattern('list.repos', 'listXrepos')).toBe(false);
    expect(matchesPattern('*', 'anything')).toBe(true);
  });

  it('reads regular-expression characters in a pattern literally', () => {
    expect(matchesPattern('a.b', 'a.b')).toBe(true);
    expect(matchesPattern('a.b', 'axb')).toBe(false);
    expect(matchesPattern('(', '(')).toBe(true);
    expect(matchesPattern('(*', 'x')).toBe(false);
    for (const p of ['[a-z]*', '^list_*', '*$', 'a|b', '\\d*', 'a+', '.*']) expect(matchesPattern(p, 'list_repos'), p).toBe(false);
    expect(matchesPattern('[a-z]*', '[a-z]_x')).toBe(true);
    expect(matchesPattern('a*a', 'a')).toBe(false);
    expect(matchesPattern('a**b', 'ab')).toBe(true);
    expect(matchesPattern('*_*_*', 'a_b_c')).toBe(true);
    expect(matchesPattern('*_*_*_*', 'a_b_c')).toBe(false);
  });

  it('answers a pattern of many * at once, matching or not (a backtracking regular expression takes minutes)', () => {
    const pattern = `*${'a*'.repeat(12)}b`;
    expect(matchesPattern(pattern, 'a'.repeat(64))).toBe(false);
    expect(matchesPattern(pattern, `${'a'.repeat(64)}b`)).toBe(true);
    expect(isToolAllowed({ excludeTools: [pattern] }, 'a'.repeat(64))).toBe(true);
  });

  it('refuses settings whose pattern lists would cost each search too much: more than 100 patterns, or one over 128 characters', () => {
    const many = Array.from({ length: TOOL_PATTERNS_MAX + 1 }, (_, i) => `*a*a*a*${i}`);
    for (const key of ['allowedTools', 'includeTools', 'excludeTools', 'approvalTools']) {
      const refused = tenantSettingsSchema.safeParse({ [key]: many });
      expect(refused.success, key).toBe(false);
      expect(refused.error?.issues[0].message).toBe(`expected at most ${TOOL_PATTERNS_MAX} patterns`);
      expect(tenantSettingsSchema.safeParse({ [key]: many.slice(1) }).success, key).toBe(true);
    }
    expect(tenantSettingsSchema.safeParse({ excludeTools: ['a'.repeat(129)] }).success).toBe(false);
    expect(tenantSettingsSchema.safeParse({ excludeTools: ['a'.repeat(128)] }).success).toBe(true);
  });

  it('applies allowedTools, includeTools and excludeTools together', () => {
    expect(isToolAllowed({}, 'create_issue')).toBe(true);
    expect(isToolAllowed({ allowedTools: ['list_repos'] }, 'create_issue')).toBe(false);
    expect(isToolAllowed({ includeTools: [] }, 'create_issue')).toBe(true);
    expect(isToolAllowed({ includeTools: ['list_*'] }, 'create_issue')).toBe(false);
    expect(isToolAllowed({ includeTools: ['*_issue'], excludeTools: ['create_*'] }, 'create_issue')).toBe(false);
    expect(isToolAllowed({ includeTools: ['*_issue'], excludeTools: ['create_*'] }, 'get_issue')).toBe(true);
  });

  it('checks providers, connection roles and sharing', () => {
    expect(isProviderEnabled({}, 'github')).toBe(true);
    expect(isProviderEnabled({ enabledProviders: ['slack'] }, 'github')).toBe(false);
    expect(hasConnectionRole({}, [])).toBe(true);
    expect(hasConnectionRole({ connectionRoles: ['eng'] }, ['member'])).toBe(false);
    expect(hasConnectionRole({ connectionRoles: ['eng'] }, ['eng'])).toBe(true);
    expect(sharingAdmits(['eng'], ['member'])).toBe(false);
    expect(sharingAdmits(['eng', 'ops'], ['ops'])).toBe(true);
  });
});
