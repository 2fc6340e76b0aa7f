import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { approvalTtlSec, approvesForOthers, mayApprove, needsApproval } from '../../core/approval-policy.js';
import { approvalSummary, redactedArguments, SECRET_PLACEHOLDER } from '../../core/approval-summary.js';
import { approvalWaitStatus, isSettled } from '../../core/approvals.js';
import { inputJsonSchema } from '../../core/json-schema.js';
import { type TenantSettings, tenantSettingsSchema } from '../../core/policy.js';
import { toolAccessFor, toolOverrideFor } from '../../core/tool-overrides.js';

const requester = { tenantId: 'ten_a', requesterUserId: 'usr_alice' };
/** A tool of provider `jots` as the registry names it. */
const jot = (name: string, access: string) => ({ tool: { name, access }, flatName: `jots_${name}`, qualifiedName: `jots__${name}` });
const as = (userId: string, roles: string[] = [], tenantId = 'ten_a') => ({ tenantId, userId, roles });

describe('approval policy', () => {
  it('destructive tools need approval by default; approveDestructive: false lifts it; approvalTools adds by pattern', () => {
    expect(needsApproval({}, jot('delete_note', 'destructive'))).toBe(true);
    expect(needsApproval({}, jot('create_note', 'write'))).toBe(false);
    expect(needsApproval({ approveDestructive: false }, jot('delete_note', 'destructive'))).toBe(false);
    expect(needsApproval({ approvalTools: ['send_*'] }, jot('send_message', 'write'))).toBe(true);
    expect(needsApproval({ approvalTools: ['send_*'], approveDestructive: false }, jot('delete_note', 'destructive'))).toBe(false);
  });

  it('tool overrides: never-ask, always-ask and read-only by pattern over qualified names; the most specific decides', () => {
    const browserTool = (name: string) => ({
      tool: { name, access: 'destructive' },
      flatName: `playwright_${name}`,
      qualifiedName: `playwright__${name}`,
    });
    const settings: TenantSettings = {
      approvalTools: ['create_*'],
      toolOverrides: [
        { pattern: 'playwright_browser_*', mode: 'read-only' },
        { pattern: 'playwright_browser_navigate', mode: 'always-ask' },
        { pattern: 'notion_API-post-search', mode: 'never-ask' },
        { pattern: 'jots__create_note', mode: 'never-ask' },
        { pattern: 'jots_get_*', mode: 'always-ask' },
      ],
    };
    // read-only: the tool counts as reading for the tenant (no approval for being destructive).
    expect(needsApproval(settings, browserTool('browser_snapshot'))).toBe(false);
    expect(toolAccessFor(settings, browserTool('browser_snapshot'))).toBe('read');
    expect(toolAccessFor({}, browserTool('browser_snapshot'))).toBe('destructive');
    // An exact name beats the pattern it falls under, wherever it is listed.
    expect(toolOverrideFor(settings, browserTool('browser_navigate'))).toBe('always-ask');
    expect(needsApproval(settings, browserTool('browser_navigate'))).toBe(true);
    expect(toolAccessFor(settings, browserTool('browser_navigate'))).toBe('destructive');
    // The upstream's own spelling names the tool Switchboard lists as notion_api_post_search.
    const search = {
      tool: { name: 'api_post_search', access: 'destructive' },
      flatName: 'notion_api_post_search',
      qualifiedName: 'notion__api_post_search',
    };
    expect(needsApproval(settings, search)).toBe(false);
    // never-ask beats approvalTools; always-ask gates a read; the agent surface's name matches too.
    expect(needsApproval(settings, jot('create_note', 'write'))).toBe(false);
    expect(needsApproval(settings, jot('create_page', 'write'))).toBe(true);
    expect(needsApproval(settings, jot('get_note', 'read'))).toBe(true);
    expect(needsApproval(settings, jot('delete_note', 'destructive'))).toBe(true);
    // A pattern never matches part of a name: `jots_get_*` is not `xjots_get_note`.
    expect(toolOverrideFor(settings, { ...jot('get_note', 'read'), flatName: 'xjots_get_note', qualifiedName: 'xjots__get_note' })).toBe(
      undefined,
    );
  });

  it('tool overrides are validated: pattern characters and length, the mode, their count, a pattern listed twice', () => {
    const issue = (toolOverrides: unknown) => {
      const result = tenantSettingsSchema.safeParse({ toolOverrides });
      return result.success ? undefined : { path: result.error.issues[0].path.join('.'), message: result.error.issues[0].message };
    };
    expect(issue([{ pattern: 'notion_api_post_search', mode: 'read-only' }])).toBeUndefined();
    expect(issue([{ pattern: 'notion_api post', mode: 'read-only' }])).toEqual({
      path: 'toolOverrides.0.pattern',
      message: expect.stringContaining('letters, digits, _, - and *'),
    });
    expect(issue([{ pattern: '', mode: 'read-only' }])?.path).toBe('toolOverrides.0.pattern');
    expect(issue([{ pattern: 'x'.repeat(201), mode: 'read-only' }])).toEqual({
      path: 'toolOverrides.0.pattern',
      message: 'expected a pattern of at most 200 characters',
    });
    expect(issue([{ pattern: 'a_*', mode: 'sometimes' }])).toEqual({
      path: 'toolOverrides.0.mode',
      message: 'expected one of never-ask, always-ask, read-only',
    });
    expect(issue([{ pattern: 'a_*', mode: 'read-only', extra: 1 }])?.path).toBe('toolOverrides.0');
    expect(issue(Array.from({ length: 101 }, (_, i) => ({ pattern: `t_${i}`, mode: 'never-ask' })))).toEqual({
      path: 'toolOverrides',
      message: 'expected at most 100 tool overrides',
    });
    expect(
      issue([
        { pattern: 'a_b', mode: 'never-ask' },
        { pattern: 'A-B', mode: 'always-ask' },
      ]),
    ).toEqual({ path: 'toolOverrides.1.pattern', message: 'this pattern is listed twice' });
  });

  it('default approvers: the caller themself and administrators of the same tenant; nobody of another tenant', () => {
    expect(mayApprove({}, requester, as('usr_alice'))).toBe(true);
    expect(mayApprove({}, requester, as('usr_ada', ['admin']))).toBe(true);
    expect(mayApprove({}, requester, as('usr_bob', ['member']))).toBe(false);
    expect(mayApprove({}, requester, as('usr_carol', ['admin'], 'ten_b'))).toBe(false);
    expect(mayApprove({}, requester, as('usr_alice', ['admin'], 'ten_b'))).toBe(false);
  });

  it('approverRoles without self: someone else with the role must approve (the caller too, only with the role)', () => {
    const settings = { approverRoles: ['lead'] };
    expect(mayApprove(settings, requester, as('usr_alice', ['member']))).toBe(false);
    expect(mayApprove(settings, requester, as('usr_alice', ['lead']))).toBe(true);
    expect(mayApprove(settings, requester, as('usr_lee', ['lead']))).toBe(true);
    expect(mayApprove(settings, requester, as('usr_ada', ['admin']))).toBe(false);
    expect(approvesForOthers(settings, ['lead'])).toBe(true);
    expect(approvesForOthers({}, ['member'])).toBe(false);
    expect(approvesForOthers({ approverRoles: ['self'] }, ['admin'])).toBe(false);
  });

  it('orgApproverRoles: calls on organisation accounts can require someone else, whatever the caller may approve of their own', () => {
    const settings = { orgApproverRoles: ['admin'] };
    const onOrg = { ...requester, accountScope: 'tenant' as const };
    // Their own call on their own account: self still approves (approverRoles default).
    expect(mayApprove(settings, requester, as('usr_alice'))).toBe(true);
    // On an organisation account: not the caller (without the role), an administrator yes.
    expect(mayApprove(settings, onOrg, as('usr_alice', ['member']))).toBe(false);
    expect(mayApprove(settings, onOrg, as('usr_ada', ['admin']))).toBe(true);
    // Unset, organisation accounts follow approverRoles.
    expect(mayApprove({}, onOrg, as('usr_alice'))).toBe(true);
    expect(approvesForOthers({ approverRoles: ['self'], orgApproverRoles: ['lead'] }, ['lead'])).toBe(true);
  });

  it('the TTL defaults to a day and is at most 30 days; settings are validated', () => {
    expect(approvalTtlSec({})).toBe(86_400);
    expect(approvalTtlSec({ approvalTtlSec: 60 })).toBe(60);
    expect(tenantSettingsSchema.safeParse({ approvalTtlSec: 30 * 86_400 + 1 }).success).toBe(false);
    expect(tenantSettingsSchema.safeParse({ approvalTtlSec: 0 }).success).toBe(false);
    expect(tenantSettingsSchema.safeParse({ approverRoles: [] }).success).toBe(false);
    expect(
      tenantSettingsSchema.safeParse({ approverRoles: ['self', 'lead'], approvalTools: ['merge_*'], approveDestructive: true }).success,
    ).toBe(true);
  });

  it('wait statuses: running and done count as APPROVED, cancelled as EXPIRED', () => {
    expect(['PENDING', 'APPROVED', 'RUNNING', 'DONE', 'DENIED', 'EXPIRED', 'CANCELLED'].map((s) => approvalWaitStatus(s as never))).toEqual(
      ['PENDING', 'APPROVED', 'APPROVED', 'APPROVED', 'DENIED', 'EXPIRED', 'EXPIRED'],
    );
    expect(isSettled('APPROVED')).toBe(false);
    expect(isSettled('DONE')).toBe(true);
  });
});

describe('approval summary', () => {
  const tool = {
    input: z.object({
      to: z.string(),
      // A secret argument is marked in the tool's schema; its name need not say so.
      code: z.string().meta({ 'x-secret': true }),
      nested: z.object({ pin: z.string().meta({ writeOnly: true }), label: z.string() }).optional(),
      items: z.array(z.object({ otp: z.string().meta({ 'x-secret': true }) })).optional(),
      body: z.string().optional(),
      apiKey: z.string().optional(),
    }),
  };

  it('a zod field marked secret carries the marking into the JSON Schema', () => {
    const schema = inputJsonSchema(tool) as { properties: Record<string, Record<string, unknown>> };
    expect(schema.properties.code['x-secret']).toBe(true);
  });

  it('replaces every secret value (marked in the schema, or named like a secret), cuts long values, names the account', () => {
    const args = {
      to: 'ops',
      code: 'c0de-SECRET',
      nested: { pin: '1234-SECRET', label: 'x' },
      items: [{ otp: 'otp-SECRET' }, { otp: 'otp2-SECRET' }],
      body: 'é'.repeat(400),
      apiKey: 'key-SECRET',
    };
    const summary = approvalSummary('svc__send', 'work account', args, inputJsonSchema(tool));
    expect(JSON.stringify(summary)).not.toContain('SECRET');
    expect(summary).toEqual({
      tool: 'svc__send',
      account: 'work account',
      arguments: {
        to: 'ops',
        code: SECRET_PLACEHOLDER,
        nested: { pin: SECRET_PLACEHOLDER, label: 'x' },
        items: [{ otp: SECRET_PLACEHOLDER }, { otp: SECRET_PLACEHOLDER }],
        body: `${'é'.repeat(300)}… (400 characters)`,
        apiKey: SECRET_PLACEHOLDER,
      },
    });
  });

  it('bounds lists, objects and depth', () => {
    const summary = approvalSummary(
      't',
      null,
      { list: Array.from({ length: 25 }, (_, i) => i), deep: { a: { b: { c: { d: 1 } } } } },
      undefined,
    );
    expect(summary.arguments.list).toEqual([...Array.from({ length: 20 }, (_, i) => i), '… (5 more)']);
    expect(summary.arguments.deep).toEqual({ a: { b: { c: '…' } } });
  });

  it('finds secrets one level down: nullable and union branches, local $refs, records, tuples, format password', () => {
    const schema = {
      type: 'object',
      $defs: { Pin: { type: 'string', writeOnly: true } },
      properties: {
        maybe: { anyOf: [{ type: 'string', 'x-secret': true }, { type: 'null' }] },
        viaRef: { $ref: '#/$defs/Pin' },
        optionalRef: { anyOf: [{ $ref: '#/$defs/Pin' }, { type: 'null' }] },
        record: { type: 'object', additionalProperties: { type: 'string', writeOnly: true } },
        patterned: { type: 'object', patternProperties: { '^k': { type: 'string', 'x-secret': true } } },
        tuple: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'string', writeOnly: true }] },
        pw: { type: 'string', format: 'password' },
      },
    };
    const args = {
      maybe: 'A-SECRET',
      viaRef: 'B-SECRET',
      optionalRef: 'C-SECRET',
      record: { one: 'D-SECRET' },
      patterned: { kx: 'E-SECRET' },
      tuple: ['shown', 'F-SECRET'],
      pw: 'G-SECRET',
    };
    for (const shown of [approvalSummary('t', null, args, schema).arguments, redactedArguments(args, schema)]) {
      expect(JSON.stringify(shown)).not.toContain('SECRET');
      expect(shown.tuple).toEqual(['shown', SECRET_PLACEHOLDER]);
    }
  });

  it('the page shows every value that will run (nothing cut), secrets aside; __proto__ keys are shown too', () => {
    const to = Array.from({ length: 21 }, (_, i) => `user${i}@example.com`);
    const message = `${'hello '.repeat(60)}https://phish.example/x`;
    const args = JSON.parse(
      `{"to": ${JSON.stringify(to)}, "message": ${JSON.stringify(message)}, "meta": {"__proto__": {"admin": true}}, "token": "T-SECRET"}`,
    );
    const shown = redactedArguments(args, undefined);
    expect(shown.to).toEqual(to);
    expect(shown.message).toBe(message);
    expect(JSON.stringify(shown)).toContain('"__proto__":{"admin":true}');
    expect(JSON.stringify(shown)).not.toContain('T-SECRET');
    // The summary the agent gets stays bounded, and keys are cut too.
    const summary = approvalSummary('t', null, { [`k${'x'.repeat(400)}`]: 1 }, undefined);
    expect(Object.keys(summary.arguments)[0].length).toBeLessThan(340);
  });
});
