import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { isGrpcServiceError } from '@temporalio/client';
import type { Page } from 'playwright-core';
import { describe, expect, inject, it } from 'vitest';
import { z } from 'zod';
import { replayHistories } from '../../bin/support/replay.js';
import { approvalWorkflowId } from '../../core/ids.js';
import type { TenantSettings } from '../../core/policy.js';
import { getTenant, updateTenantSettings } from '../../features/accounts/store/tenants.js';
import { approvalFor, decide } from '../../features/approvals/decide.js';
import {
  createApproval,
  decideApproval,
  getApproval,
  MAX_PENDING_APPROVALS_PER_USER,
  openApprovedCall,
  resealApprovals,
} from '../../features/approvals/store/approvals.js';
import { approvalDecidedSignal } from '../../features/approvals/workflow.js';
import { createExecuteActivities } from '../../features/execution/execute-tool.js';
import { Keyring } from '../../platform/database/keyring.js';
import { startAgentWorker } from '../support/agent-worker.js';
import { signedInPage } from '../support/consent.js';
import { FIXTURE_KEYRING_ENV } from '../support/fixture-key.js';
import { spawnWorkerProcess, startWorld, type TestUser } from '../support/harness.js';
import { historyText, historyToFixture, rawHistoriesOf } from '../support/history-text.js';
import { startTestUpstream } from '../support/mcp-upstream-server.js';
import { signInToPortal } from '../support/portal-session.js';
import { createWaitingApproval } from '../support/waiting-approval.js';

// Approvals end to end on real parts: the gate in the execute activity, the approval-<id>
// workflow, the portal page in chromium and over plain HTTP, wait_for_approval, agent workflows.
// Attackers: another tenant, a user of the same tenant without an approver role, a cross-site
// page (CSRF), an agent approving its own call through the API, a replayed decision, a second
// approve racing the first.

/** What reached the upstream's send_pin tool, arguments as they arrived. */
const pinCalls: { to: string; pin: string }[] = [];
let deletes = 0;
let searches = 0;
const PIN = 'pin-839201-never-shown';

const upstream = await startTestUpstream({
  extraTools(server) {
    server.registerTool(
      'send_pin',
      {
        description: 'Sends a one-time PIN to a person',
        // The PIN is marked secret in the tool's schema (JSON Schema writeOnly); its name says nothing.
        inputSchema: { to: z.string(), pin: z.string().meta({ writeOnly: true }), note: z.string().optional() },
        annotations: { destructiveHint: false, readOnlyHint: false },
      },
      async ({ to, pin }) => {
        pinCalls.push({ to, pin });
        return { content: [{ type: 'text', text: `sent to ${to}` }] };
      },
    );
    server.registerTool('wipe', { description: 'Wipes the records', annotations: { destructiveHint: true } }, async () => {
      deletes++;
      return { content: [{ type: 'text', text: 'wiped' }] };
    });
    // A read its server lists without annotations (destructive by the MCP default), as most servers do.
    server.registerTool(
      'search_records',
      { description: 'Searches the records', inputSchema: { query: z.string() } },
      async ({ query }) => {
        searches++;
        return { content: [{ type: 'text', text: `found ${query}` }] };
      },
    );
    server.registerTool(
      'protect_branch',
      {
        description: 'Protects a branch; the people listed may bypass its pull request rule',
        inputSchema: {
          branch: z.string(),
          bypass_pull_request_allowances: z.object({ users: z.array(z.string()) }),
          token_address: z.string(),
          access_token: z.string(),
        },
        annotations: { destructiveHint: true },
      },
      async ({ branch }) => ({ content: [{ type: 'text', text: `protected ${branch}` }] }),
    );
  },
});

const world = await startWorld({
  env: {
    // A fixed, test-only key, so the approval histories recorded here can be kept as replay fixtures.
    ENCRYPTION_KEYS: FIXTURE_KEYRING_ENV,
    UPSTREAM_MCP_ALLOWED_HOSTS: '127.0.0.1',
    UPSTREAM_MCP_SERVERS: JSON.stringify([{ name: 'up', displayName: 'Up', url: upstream.url }]),
  },
});
world.onStop(() => upstream.close());
const { stack } = world;
const { pool } = stack.services;

const alice = await world.user({ email: 'alice@example.com' });
const bob = await world.user({ tenantId: alice.user.tenantId, email: 'bob@example.com' }); // a member, no approver role
const ada = await world.user({ tenantId: alice.user.tenantId, email: 'ada@example.com', roles: ['admin'] });
const carol = await world.user({ email: 'carol@example.com', roles: ['admin'] }); // another tenant's administrator
const browser = await world.browser();

const execute = (user: TestUser, name: string, args: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) =>
  user.call('connections_execute', { name, arguments: args, ...extra }).then((r) => r.body);
const waitFor = (user: TestUser, approvalId: string, timeoutSec = 30) => user.call('wait_for_approval', { approvalId, timeoutSec });

async function newNote(user: TestUser, title = 'A note'): Promise<string> {
  const created = await execute(user, 'jots__create_note', { title, body: 'text' });
  expect(created.ok).toBe(true);
  return created.result.id;
}

/** A gated delete of a new note: the approval_required answer and the note's id. */
async function gatedDelete(user: TestUser, extra: Record<string, unknown> = {}) {
  const id = await newNote(user);
  const answer = await execute(user, 'jots__delete_note', { id }, extra);
  expect(answer).toMatchObject({ ok: false, error: { code: 'approval_required', approvalId: expect.stringMatching(/^apr_/) } });
  return { id, approvalId: answer.error.approvalId as string, answer };
}

async function setSettings(user: TestUser, settings: TenantSettings) {
  await updateTenantSettings(pool, user.user.tenantId, settings);
}

/** The portal for `user` (a real session cookie), with the approval page's decision form. */
async function portalSession(user: TestUser) {
  const portal = await signInToPortal(stack, user);
  return {
    ...portal,
    /** Posts a decision as the approval page's form does: also what a replayed or forged-but-signed-in post sends. */
    decide: (approvalId: string, decision: 'approve' | 'deny', reason = '') =>
      portal.post(`/portal/approvals/${approvalId}`, new URLSearchParams({ _csrf: portal.csrf, decision, reason })),
  };
}

async function auditRows(tenantId: string, kind: string, tool: string) {
  const { rows } = await pool.query(
    `SELECT actor_user_id, outcome, error_code, detail FROM audit_log WHERE tenant_id = $1 AND kind = $2 AND tool = $3 ORDER BY id`,
    [tenantId, kind, tool],
  );
  return rows;
}

describe('the gate', () => {
  it('a destructive call does not run: approval_required with id, page url and summary; search and schema say so', async () => {
    const { id, approvalId, answer } = await gatedDelete(alice);
    expect(answer.error).toMatchObject({
      url: `${stack.baseUrl}/portal/approvals/${approvalId}`,
      summary: { tool: 'jots__delete_note', account: null, arguments: { id } },
      message: expect.stringContaining('wait_for_approval'),
    });
    expect((await execute(alice, 'jots__get_note', { id })).ok).toBe(true); // nothing ran

    const search = (await alice.call('search_tools', { query: 'delete note' })).body.tools;
    expect(search.find((t: { name: string }) => t.name === 'jots_delete_note')).toMatchObject({ needsApproval: true });
    expect(search.find((t: { name: string }) => t.name === 'jots_get_note')?.needsApproval).toBeUndefined();
    expect((await alice.call('get_tool_schema', { tool: 'jots_delete_note' })).body).toMatchObject({ needsApproval: true });
    expect((await alice.call('get_tool_schema', { tool: 'jots_create_note' })).body.needsApproval).toBeUndefined();
    const agentSearch = (await alice.call('connections_search', { query: 'delete note', provider: 'jots' })).body.results;
    expect(agentSearch.find((t: { name: string }) => t.name === 'jots__delete_note')).toMatchObject({ needsApproval: true });

    // The approval is a workflow operators can find by tenant, user, tool and outcome.
    const description = await stack.services.temporal.workflow.getHandle(approvalWorkflowId(approvalId)).describe();
    expect(description.status.name).toBe('RUNNING');
    expect(description.searchAttributes).toMatchObject({
      SwitchboardTenant: [alice.user.tenantId],
      SwitchboardUser: [alice.user.id],
      SwitchboardTool: ['jots__delete_note'],
      SwitchboardOutcome: ['PENDING'],
    });
    expect(await waitFor(alice, approvalId, 1)).toEqual({ status: 200, body: { status: 'PENDING' } });
  });

  it('a batch runs its other entries; the gated one answers APPROVAL_REQUIRED', async () => {
    const id = await newNote(alice, 'Keep me');
    const { body } = await alice.call('execute_tools', {
      executions: [
        { tool: 'jots_create_note', args: { title: 'Batch note', body: 'b' } },
        { tool: 'jots_delete_note', args: { id } },
        { tool: 'jots_get_note', args: { id } },
      ],
    });
    expect(body.results[0]).toEqual({ result: expect.objectContaining({ title: 'Batch note' }) });
    expect(body.results[1]).toEqual({
      error: 'APPROVAL_REQUIRED',
      approvalId: expect.stringMatching(/^apr_/),
      url: expect.stringContaining('/portal/approvals/apr_'),
      summary: { tool: 'jots__delete_note', account: null, arguments: { id } },
      message: expect.stringContaining('needs a person'),
    });
    expect(body.results[2]).toEqual({ result: expect.objectContaining({ id, title: 'Keep me' }) });
  });

  it('tenant settings: approvalTools gates a tool by name; approveDestructive: false lifts the default', async () => {
    const dora = await world.user({ email: 'dora@example.com' });
    await setSettings(dora, { approvalTools: ['create_*'], approveDestructive: false });
    expect(await execute(dora, 'jots__create_note', { title: 't', body: 'b' })).toMatchObject({ error: { code: 'approval_required' } });
    const { rows } = await pool.query(`SELECT id FROM jots WHERE tenant_id = $1`, [dora.user.tenantId]);
    expect(rows).toEqual([]);
    await setSettings(dora, { approveDestructive: false });
    const id = await newNote(dora);
    expect(await execute(dora, 'jots__delete_note', { id })).toEqual({ ok: true, result: { deleted: true, id } });
  });
});

describe('decisions', () => {
  it('approve: the call runs once, by the approval workflow; the waiter gets its result; audited', async () => {
    const { id, approvalId } = await gatedDelete(alice);
    const waiting = waitFor(alice, approvalId, 60);
    const portal = await portalSession(alice); // default approvers: the caller themself and administrators
    const res = await portal.decide(approvalId, 'approve', 'tidying up');
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`/portal/approvals/${approvalId}?done=approved`);
    expect(await waiting).toEqual({ status: 200, body: { status: 'APPROVED', result: { result: { deleted: true, id } } } });
    expect((await execute(alice, 'jots__get_note', { id })).ok).toBe(false); // it ran
    // The same wait again: the same answer, nothing runs twice.
    expect((await waitFor(alice, approvalId)).body).toEqual({ status: 'APPROVED', result: { result: { deleted: true, id } } });

    const calls = (await auditRows(alice.user.tenantId, 'tool_call', 'jots__delete_note')).filter((r) => r.outcome === 'ok');
    expect(calls).toHaveLength(1);
    const decisions = (await auditRows(alice.user.tenantId, 'approval_decision', 'jots__delete_note')).filter(
      (r) => r.detail.approvalId === approvalId,
    );
    expect(decisions).toEqual([
      { actor_user_id: alice.user.id, outcome: 'APPROVED', error_code: null, detail: { approvalId, reason: 'tidying up' } },
    ]);
    const row = await getApproval(pool, approvalId);
    expect(row).toMatchObject({ status: 'DONE', decidedBy: alice.user.id, reason: 'tidying up', outcomeCode: 'ok' });
    const description = await stack.services.temporal.workflow.getHandle(approvalWorkflowId(approvalId)).describe();
    expect(description.searchAttributes.SwitchboardOutcome).toEqual(['APPROVED']);

    // A replayed decision (the same form posted again) changes nothing.
    const again = await portal.decide(approvalId, 'deny');
    expect(again.headers.get('location')).toBe(`/portal/approvals/${approvalId}?done=already`);
    expect((await getApproval(pool, approvalId))?.status).toBe('DONE');
  });

  it('deny: the call never runs; the waiter hears DENIED; the agent surface answers the same', async () => {
    const { id, approvalId } = await gatedDelete(alice);
    const portal = await portalSession(ada); // an administrator of the tenant
    expect((await portal.decide(approvalId, 'deny', 'not today')).headers.get('location')).toContain('done=denied');
    expect((await waitFor(alice, approvalId)).body).toEqual({ status: 'DENIED', reason: 'not today' });
    expect((await execute(alice, 'jots__get_note', { id })).ok).toBe(true);
    expect(await getApproval(pool, approvalId)).toMatchObject({ status: 'DENIED', decidedBy: ada.user.id, reason: 'not today' });
    const page = await (await portal.get(`/portal/approvals/${approvalId}`)).text();
    expect(page).toContain('Denied');
    expect(page).toContain('not today');
  });

  it('U+0000 in a decision: a reason carrying one is refused by name and nothing is decided; an approval id carrying one is unknown', async () => {
    const { approvalId } = await gatedDelete(alice);
    const portal = await portalSession(ada);
    const refused = await portal.decide(approvalId, 'deny', 'not\u0000today');
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({
      error: 'The form field "reason" contains U+0000 (a NUL character), which no field here can hold.',
    });
    expect((await getApproval(pool, approvalId))?.status).toBe('PENDING');
    // A reason that reaches the store another way (the library) is kept as U+FFFD, never a failed write.
    const decided = await decideApproval(pool, {
      id: approvalId,
      tenantId: alice.user.tenantId,
      decision: 'DENIED',
      decidedBy: ada.user.id,
      reason: 'not\u0000today',
    });
    expect(decided?.approval.reason).toBe('not\uFFFDtoday');
    const [decision] = (await auditRows(alice.user.tenantId, 'approval_decision', 'jots__delete_note')).filter(
      (row) => row.detail.approvalId === approvalId,
    );
    expect(decision.detail.reason).toBe('not\uFFFDtoday');
    for (const id of [`${approvalId}%00`, '%00']) {
      expect((await portal.decide(id, 'approve')).status, id).toBe(404);
      expect((await portal.get(`/portal/approvals/${id}`)).status, id).toBe(404);
    }
  });

  it('expire: with no decision before approvalTtlSec the approval is EXPIRED and the call never runs', async () => {
    const erin = await world.user({ email: 'erin@example.com' });
    await setSettings(erin, { approvalTtlSec: 2 });
    const { id, approvalId } = await gatedDelete(erin);
    expect((await waitFor(erin, approvalId, 30)).body).toEqual({ status: 'EXPIRED' });
    const portal = await portalSession(erin);
    expect((await portal.decide(approvalId, 'approve')).headers.get('location')).toContain('done=already');
    expect((await execute(erin, 'jots__get_note', { id })).ok).toBe(true);
    expect((await getApproval(pool, approvalId))?.status).toBe('EXPIRED');
    const description = await stack.services.temporal.workflow.getHandle(approvalWorkflowId(approvalId)).describe();
    expect(description.searchAttributes.SwitchboardOutcome).toEqual(['EXPIRED']);
  });

  it('a decision signal no recorded decision backs (someone who reaches Temporal with the payload key) changes nothing', async () => {
    const { id, approvalId } = await gatedDelete(alice);
    const handle = stack.services.temporal.workflow.getHandle(approvalWorkflowId(approvalId));
    await handle.signal(approvalDecidedSignal, { status: 'APPROVED' });
    expect((await waitFor(alice, approvalId, 2)).body).toEqual({ status: 'PENDING' });
    expect((await execute(alice, 'jots__get_note', { id })).ok).toBe(true);
    expect((await handle.describe()).status.name).toBe('RUNNING');
    // The approval still waits for a real decision, and runs once on it.
    await (await portalSession(alice)).decide(approvalId, 'approve');
    expect((await waitFor(alice, approvalId)).body).toEqual({ status: 'APPROVED', result: { result: { deleted: true, id } } });
  });

  it('cancelled (an operator cancels its workflow): the call never runs; waiters hear EXPIRED', async () => {
    const { id, approvalId } = await gatedDelete(alice);
    const handle = stack.services.temporal.workflow.getHandle(approvalWorkflowId(approvalId));
    await handle.cancel();
    expect(await handle.result()).toEqual({ status: 'CANCELLED' });
    expect((await waitFor(alice, approvalId)).body).toEqual({ status: 'EXPIRED' });
    expect((await (await portalSession(alice)).decide(approvalId, 'approve')).headers.get('location')).toContain('done=already');
    expect((await getApproval(pool, approvalId))?.status).toBe('CANCELLED');
    expect((await execute(alice, 'jots__get_note', { id })).ok).toBe(true);
    expect((await handle.describe()).searchAttributes.SwitchboardOutcome).toEqual(['CANCELLED']);
  });

  it('two approvers racing: exactly one decision, exactly one call', async () => {
    const answer = await execute(alice, 'up__wipe', {});
    expect(answer.error.code).toBe('approval_required');
    const { approvalId } = answer.error;
    const [mine, theirs] = await Promise.all([portalSession(alice), portalSession(ada)]);
    const results = await Promise.all([mine.decide(approvalId, 'approve', 'me'), theirs.decide(approvalId, 'approve', 'admin')]);
    const outcomes = results.map((r) => new URL(r.headers.get('location')!, stack.baseUrl).searchParams.get('done')).sort();
    expect(outcomes).toEqual(['already', 'approved']);
    expect((await waitFor(alice, approvalId)).body).toEqual({ status: 'APPROVED', result: { result: 'wiped' } });
    expect(deletes).toBe(1);
    expect((await auditRows(alice.user.tenantId, 'approval_decision', 'up__wipe')).length).toBe(1);
  });
});

describe('who may approve', () => {
  it('another tenant, a member without an approver role, an agent through the API: refused exactly like an unknown id', async () => {
    const { id, approvalId } = await gatedDelete(alice);
    const unknownId = 'apr_doesnotexist0000000000000';
    for (const stranger of [bob, carol]) {
      const portal = await portalSession(stranger);
      const page = await portal.get(`/portal/approvals/${approvalId}`);
      const unknown = await portal.get(`/portal/approvals/${unknownId}`);
      expect(page.status).toBe(404);
      expect(await page.text()).toBe(await unknown.text());
      // Even posting the form themselves (with their own session's valid token), the decision is refused.
      const posted = await portal.decide(approvalId, 'approve');
      const postedUnknown = await portal.decide(unknownId, 'approve');
      expect(posted.status).toBe(404);
      expect(await posted.text()).toBe(await postedUnknown.text());
      // Their agents cannot wait on it (or learn it exists) either.
      const waited = await waitFor(stranger, approvalId, 1);
      expect(waited).toEqual({ status: 404, body: { error: 'Unknown approvalId' } });
      expect(await waitFor(stranger, unknownId, 1)).toEqual(waited);
      // The organisation list does not show it.
      expect(await (await portal.get('/portal/approvals')).text()).not.toContain(approvalId);
    }

    // Alice's own agent holds her API key, not a portal session: no API approves anything.
    const withKey = await fetch(`${stack.baseUrl}/portal/approvals/${approvalId}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice.apiKey}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ decision: 'approve' }),
    });
    expect(withKey.status).toBe(403);
    expect((await alice.call('approve', { approvalId })).status).toBe(404);
    expect((await alice.call('wait_for_approval', { approvalId, timeoutSec: 1, approve: true })).status).toBe(400);

    expect((await getApproval(pool, approvalId))?.status).toBe('PENDING');
    expect((await execute(alice, 'jots__get_note', { id })).ok).toBe(true);
  });

  it('approverRoles without self: an organisation requires someone else, with the role, to approve', async () => {
    const frank = await world.user({ email: 'frank@example.com', roles: ['member'] });
    const lead = await world.user({ tenantId: frank.user.tenantId, email: 'lead@example.com', roles: ['lead'] });
    await setSettings(frank, { approverRoles: ['lead'] });
    const { id, approvalId } = await gatedDelete(frank);
    const own = await portalSession(frank);
    expect((await own.decide(approvalId, 'approve')).status).toBe(404);
    const leader = await portalSession(lead);
    const list = await (await leader.get('/portal/approvals')).text();
    expect(list).toContain(approvalId);
    expect(list).toContain('frank@example.com');
    expect(list).toContain('role lead'); // the tenant's approval settings, shown
    expect((await leader.decide(approvalId, 'approve')).headers.get('location')).toContain('done=approved');
    expect((await waitFor(frank, approvalId)).body).toEqual({ status: 'APPROVED', result: { result: { deleted: true, id } } });
  });
});

describe('exactly once', () => {
  it('a gated call re-run under its call key (its workflow task was lost) answers the same approval, never a second one', async () => {
    const id = await newNote(alice);
    const activities = createExecuteActivities(stack.services);
    const input = {
      callKey: `tool-batch-lost-gated-${id}#0`,
      tenantId: alice.user.tenantId,
      userId: alice.user.id,
      call: { tool: 'jots__delete_note', args: { id } },
      claimFirst: true,
    };
    const first = await activities.executeToolCall(input);
    const again = await activities.executeToolCall(input);
    expect(first).toMatchObject({ ok: false, error: { code: 'approval_required', approvalId: expect.stringMatching(/^apr_/) } });
    expect(again).toEqual(first);
    const { rows } = await pool.query(`SELECT count(*)::int AS n FROM approvals WHERE call_key = $1`, [input.callKey]);
    expect(rows[0].n).toBe(1);
    expect((await execute(alice, 'jots__get_note', { id })).ok).toBe(true);
  });
});

describe('requestId', () => {
  it('the same requestId again answers the same approval while pending, then the approved result — never a second approval', async () => {
    const id = await newNote(alice);
    const requestId = `req-${id}`;
    const first = await execute(alice, 'jots__delete_note', { id }, { requestId });
    expect(first.error.code).toBe('approval_required');
    const again = await execute(alice, 'jots__delete_note', { id }, { requestId });
    expect(again.error.approvalId).toBe(first.error.approvalId);
    const { rows } = await pool.query(
      `SELECT count(*)::int AS n FROM approvals WHERE requester_user_id = $1 AND summary->'arguments'->>'id' = $2`,
      [alice.user.id, id],
    );
    expect(rows[0].n).toBe(1);

    await (await portalSession(alice)).decide(first.error.approvalId, 'approve');
    await waitFor(alice, first.error.approvalId);
    expect(await execute(alice, 'jots__delete_note', { id }, { requestId })).toEqual({ ok: true, result: { deleted: true, id } });
    expect((await auditRows(alice.user.tenantId, 'tool_call', 'jots__delete_note')).filter((r) => r.outcome === 'ok').length).toBe(
      (
        await pool.query(
          `SELECT count(*)::int AS n FROM approvals WHERE tenant_id = $1 AND tool = 'jots__delete_note' AND status = 'DONE'`,
          [alice.user.tenantId],
        )
      ).rows[0].n,
    );
  });
});

describe('secrets', () => {
  it('the summary never shows a secret argument (marked in the tool schema); the approved call gets the real value', async () => {
    await setSettings(alice, { approvalTools: ['send_pin'] });
    try {
      const note = 'n'.repeat(1000);
      const answer = await execute(alice, 'up__send_pin', { to: 'ops', pin: PIN, note });
      expect(answer.error.summary).toEqual({
        tool: 'up__send_pin',
        account: null,
        arguments: { to: 'ops', pin: '[secret]', note: `${'n'.repeat(300)}… (1000 characters)` },
      });
      const { approvalId } = answer.error;
      expect(JSON.stringify(answer)).not.toContain(PIN);
      const portal = await portalSession(alice);
      const page = await (await portal.get(`/portal/approvals/${approvalId}`)).text();
      expect(page).toContain('[secret]');
      expect(page).not.toContain(PIN);
      const { rows } = await pool.query(`SELECT * FROM approvals WHERE id = $1`, [approvalId]);
      expect(JSON.stringify(rows[0])).not.toContain(PIN); // sealed
      await portal.decide(approvalId, 'approve');
      expect((await waitFor(alice, approvalId)).body).toMatchObject({ status: 'APPROVED', result: { result: 'sent to ops' } });
      expect(pinCalls).toEqual([{ to: 'ops', pin: PIN }]);
      const history = await stack.services.temporal.workflow.getHandle(approvalWorkflowId(approvalId)).fetchHistory();
      expect(historyText(history)).not.toContain(PIN);
      expect(stack.logs.text()).not.toContain(PIN);
    } finally {
      await setSettings(alice, {});
    }
  });
});

describe('keys', () => {
  it('`keys reseal` moves an approval (its sealed call and outcome) to the new key; it still opens', async () => {
    const { id, approvalId } = await gatedDelete(alice);
    const keys = new Map([...stack.services.config.ENCRYPTION_KEYS!, ['approvals2', randomBytes(32)]]);
    const rotated = new Keyring(keys, 'approvals2');
    expect(await resealApprovals(pool, rotated)).toBeGreaterThanOrEqual(1);
    expect(await resealApprovals(pool, rotated)).toBe(0);
    const approval = (await getApproval(pool, approvalId))!;
    expect(await openApprovedCall(pool, rotated, approval)).toEqual({ tool: 'jots__delete_note', args: { id } });
    // Back to the stack's own key, so the worker (which holds only it) still opens it.
    expect(await resealApprovals(pool, new Keyring(keys, stack.services.keyring.activeKeyId))).toBeGreaterThanOrEqual(1);
    await (await portalSession(alice)).decide(approvalId, 'approve');
    expect((await waitFor(alice, approvalId)).body).toEqual({ status: 'APPROVED', result: { result: { deleted: true, id } } });
  });
});

describe('durability', () => {
  it('approve after the worker was SIGKILLed while the approval was pending: the call runs once when a worker is back', async () => {
    await stack.stopWorker();
    let worker: ChildProcess = await spawnWorkerProcess(stack);
    try {
      const { id, approvalId } = await gatedDelete(alice);
      worker.kill('SIGKILL');
      await new Promise((r) => worker.once('exit', r));
      // The decision lands while no worker runs: recorded in Postgres, its signal waits in Temporal.
      expect((await (await portalSession(alice)).decide(approvalId, 'approve')).headers.get('location')).toContain('done=approved');
      worker = await spawnWorkerProcess(stack);
      expect((await waitFor(alice, approvalId, 120)).body).toEqual({ status: 'APPROVED', result: { result: { deleted: true, id } } });
      const audit = await pool.query(`SELECT outcome FROM audit_log WHERE call_key = $1`, [approvalWorkflowId(approvalId)]);
      expect(audit.rows).toEqual([{ outcome: 'ok' }]);
    } finally {
      worker.kill('SIGKILL');
      await stack.startWorker();
    }
  }, 180_000);

  it('an agent workflow waits durably (a timer, no worker held) for a decision, then gets the outcome of the one run', async () => {
    const gil = await world.user({ email: 'gil@example.com' });
    await setSettings(gil, { approvalTtlSec: 3 * 24 * 3600 }); // an approval may wait days
    const id = await newNote(gil);
    const agent = await startAgentWorker(stack);
    try {
      const running = agent.run<{ ok: boolean; result?: unknown }>(
        'executeOnce',
        { tenantId: gil.user.tenantId, userId: gil.user.id },
        { call: { tool: 'jots__delete_note', args: { id } } },
      );
      // Awaited below; should an expectation fail first, its end (the stack closing under it) is not an unhandled rejection.
      running.catch(() => {});
      let approvalId: string | undefined;
      for (let i = 0; i < 100 && !approvalId; i++) {
        const { rows } = await pool.query(`SELECT id FROM approvals WHERE requester_user_id = $1 AND status = 'PENDING'`, [gil.user.id]);
        approvalId = rows[0]?.id;
        if (!approvalId) await new Promise((r) => setTimeout(r, 200));
      }
      expect(approvalId).toBeDefined();
      let ttlSec: number | undefined;
      for (let i = 0; i < 100 && ttlSec === undefined; i++) {
        // The row is written just before its workflow starts: the workflow may not exist yet (a moment longer on a real server).
        const history = await stack.services.temporal.workflow
          .getHandle(approvalWorkflowId(approvalId!))
          .fetchHistory()
          .catch((err: unknown) => {
            if (isGrpcServiceError(err) && err.code === 5) return undefined; // NOT_FOUND
            throw err;
          });
        const timer = history?.events?.find((e) => e.timerStartedEventAttributes)?.timerStartedEventAttributes?.startToFireTimeout;
        if (timer) ttlSec = Number(String(timer.seconds));
        else await new Promise((r) => setTimeout(r, 100));
      }
      // Its first timer is the hourly look at the database (a lost decision signal is found within the
      // hour); the approval itself lives for its TTL of three days.
      expect(ttlSec).toBe(3600);
      const { rows: ttlRows } = await pool.query(
        'SELECT extract(epoch FROM expires_at - created_at)::int AS ttl FROM approvals WHERE id = $1',
        [approvalId],
      );
      expect(Math.abs(ttlRows[0].ttl - 3 * 24 * 3600)).toBeLessThan(60);
      await new Promise((r) => setTimeout(r, 1000));
      await (await portalSession(gil)).decide(approvalId!, 'approve');
      const { result, timers } = await running;
      expect(result).toEqual({ ok: true, result: { deleted: true, id } });
      expect(timers).toBeGreaterThanOrEqual(1); // the wait was a durable timer (plus the signal), not a held activity
      expect((await auditRows(gil.user.tenantId, 'tool_call', 'jots__delete_note')).filter((r) => r.outcome === 'ok')).toHaveLength(1);
    } finally {
      await agent.stop();
    }
  }, 120_000);
});

describe('the approval page in chromium', () => {
  const open = async (user: TestUser, path: string): Promise<Page> => {
    const page = await signedInPage(browser, user);
    await page.goto(`${stack.baseUrl}${path}`);
    return page;
  };

  it('shows what will run; approving with a reason runs it; the list shows what is pending', async () => {
    const { id, approvalId, answer } = await gatedDelete(alice);
    const page = await open(alice, '/portal/approvals');
    await page.locator(`tr[data-approval="${approvalId}"] a`).click();
    expect(page.url()).toBe(answer.error.url);
    expect(await page.locator('[data-tool]').textContent()).toBe('jots__delete_note');
    expect(JSON.parse((await page.locator('[data-arguments]').textContent()) ?? '')).toEqual({ id });
    await page.locator('#reason').fill('checked with the team');
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.waitForURL(/done=approved/);
    expect(await page.getByRole('status').first().textContent()).toContain('Approved');
    expect((await waitFor(alice, approvalId)).body.status).toBe('APPROVED');
    await page.reload();
    expect(await page.locator('[data-reason]').textContent()).toBe('checked with the team');
    expect(await page.getByRole('button', { name: 'Approve' }).count()).toBe(0);
    await page.context().close();
  });

  it('shows arguments whose names only contain a secret-looking word (who may bypass a branch rule); a real secret stays hidden', async () => {
    const token = 'gho_never-shown-on-the-page';
    const args = {
      branch: 'main',
      bypass_pull_request_allowances: { users: ['mallory'] },
      token_address: '0x51ab',
      access_token: token,
    };
    const answer = await execute(alice, 'up__protect_branch', args);
    expect(answer).toMatchObject({ ok: false, error: { code: 'approval_required' } });
    const page = await open(alice, `/portal/approvals/${answer.error.approvalId}`);
    const shown = JSON.parse((await page.locator('[data-arguments]').textContent()) ?? '');
    expect(shown).toEqual({ ...args, access_token: '[secret]' });
    expect(await page.content()).not.toContain(token);
    expect(answer.error.summary.arguments.bypass_pull_request_allowances).toEqual({ users: ['mallory'] });
    await page.getByRole('button', { name: 'Deny' }).click();
    await page.waitForURL(/done=denied/);
    await page.context().close();
  });

  it('a cross-site page cannot decide (CSRF), nor a same-site request without the form token; another user sees nothing', async () => {
    const { approvalId } = await gatedDelete(alice);
    const page = await open(alice, `/portal/approvals/${approvalId}`);
    // An attacker's page, on another origin, auto-submitting a form to the approval in the victim's browser.
    const evil = await world.serve((_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(`<form id="f" method="post" action="${stack.baseUrl}/portal/approvals/${approvalId}">
<input name="decision" value="approve"></form><script>document.getElementById('f').submit()</script>`);
    });
    const response = page.waitForResponse((r) => r.url().includes(`/portal/approvals/${approvalId}`) && r.request().method() === 'POST');
    await page.goto(evil.url);
    expect((await response).status()).toBe(403);
    // From the portal's own origin, but without the form's token.
    await page.goto(`${stack.baseUrl}/portal/approvals/${approvalId}`);
    const status = await page.evaluate(
      async (url) =>
        (await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'decision=approve' }))
          .status,
      `${stack.baseUrl}/portal/approvals/${approvalId}`,
    );
    expect(status).toBe(403);
    expect((await getApproval(pool, approvalId))?.status).toBe('PENDING');
    await page.context().close();

    // Signed in as someone else of the tenant, without an approver role: the page of an unknown approval.
    const other = await open(bob, `/portal/approvals/${approvalId}`);
    expect(await other.locator('h1').textContent()).toBe('No such approval');
    expect(await other.getByRole('button', { name: 'Approve' }).count()).toBe(0);
    await other.context().close();
    // Signed out: sent to sign in first.
    const anonymous = await (await browser.newContext()).newPage();
    await anonymous.goto(`${stack.baseUrl}/portal/approvals/${approvalId}`);
    expect(new URL(anonymous.url()).pathname).toBe('/portal/login');
    await anonymous.context().close();
  });
});

describe('tool overrides', () => {
  const overrideForm = (portal: Awaited<ReturnType<typeof portalSession>>, pattern: string, mode: string) =>
    portal.post('/portal/tool-overrides', new URLSearchParams({ _csrf: portal.csrf, pattern, mode }));
  const overridesOf = async (user: TestUser) => (await getTenant(pool, user.user.tenantId))?.settings.toolOverrides;
  const searchAccess = async (user: TestUser, name: string) =>
    (await user.call('connections_search', { query: 'search records', provider: 'up' })).body.results.find(
      (r: { name: string }) => r.name === name,
    );

  it('an administrator overrides in the portal: read-only lets an unannotated read run, never-ask and always-ask decide; audited', async () => {
    // Unannotated: destructive by the MCP default, so it waits for approval.
    expect(await execute(alice, 'up__search_records', { query: 'q' })).toMatchObject({ ok: false, error: { code: 'approval_required' } });
    expect(await searchAccess(alice, 'up__search_records')).toMatchObject({ access: 'destructive', needsApproval: true });
    const admin = await portalSession(ada);
    try {
      const saved = await overrideForm(admin, 'up_search_records', 'read-only');
      expect(saved.status).toBe(303);
      expect(saved.headers.get('location')).toBe('/portal/tool-overrides?done=saved');
      expect(await execute(alice, 'up__search_records', { query: 'q' })).toEqual({ ok: true, result: 'found q' });
      expect(searches).toBe(1);
      const found = await searchAccess(alice, 'up__search_records');
      expect(found.access).toBe('read');
      expect(found.needsApproval).toBeUndefined();
      // never-ask: a destructive tool runs at once; always-ask: a read waits.
      expect((await overrideForm(admin, 'up_wipe', 'never-ask')).status).toBe(303);
      expect((await overrideForm(admin, 'jots__get_*', 'always-ask')).status).toBe(303);
      const before = deletes;
      expect(await execute(alice, 'up__wipe')).toEqual({ ok: true, result: 'wiped' });
      expect(deletes).toBe(before + 1);
      const id = await newNote(alice);
      expect(await execute(alice, 'jots__get_note', { id })).toMatchObject({ ok: false, error: { code: 'approval_required' } });
      // The page lists them; saving a listed pattern again changes its mode where it stands.
      expect((await overrideForm(admin, 'UP-wipe', 'always-ask')).status).toBe(303);
      expect(await overridesOf(alice)).toEqual([
        { pattern: 'up_search_records', mode: 'read-only' },
        { pattern: 'UP-wipe', mode: 'always-ask' },
        { pattern: 'jots__get_*', mode: 'always-ask' },
      ]);
      const page = await (await admin.get('/portal/tool-overrides')).text();
      expect(page).toContain('data-override="up_search_records"');
      const removed = await admin.post(
        '/portal/tool-overrides/remove',
        new URLSearchParams({ _csrf: admin.csrf, pattern: 'up_search_records' }),
      );
      expect(removed.status).toBe(303);
      expect(await execute(alice, 'up__search_records', { query: 'q' })).toMatchObject({ ok: false, error: { code: 'approval_required' } });
      const { rows } = await pool.query(
        `SELECT actor_user_id, detail FROM audit_log WHERE tenant_id = $1 AND kind = 'settings_change' ORDER BY id`,
        [alice.user.tenantId],
      );
      expect(rows).toHaveLength(5);
      expect(rows.every((r) => r.actor_user_id === ada.user.id)).toBe(true);
      expect(rows[0].detail).toEqual({ toolOverrides: [{ pattern: 'up_search_records', mode: 'read-only' }] });
    } finally {
      await setSettings(alice, {});
    }
  });

  it('a bad pattern or mode is refused naming the field, and nothing is stored', async () => {
    const admin = await portalSession(ada);
    const cases: [string, string, string][] = [
      ['up search', 'read-only', 'pattern: expected a non-empty pattern'],
      ['x'.repeat(201), 'read-only', 'pattern: expected a pattern of at most 200 characters'],
      ['', 'read-only', 'pattern: expected a non-empty pattern'],
      ['up_*', 'sometimes', 'mode: expected one of never-ask, always-ask, read-only'],
    ];
    for (const [pattern, mode, message] of cases) {
      const res = await overrideForm(admin, pattern, mode);
      expect(res.status, pattern).toBe(400);
      expect(await res.text(), pattern).toContain(`Not saved: ${message}`);
    }
    expect(await overridesOf(alice)).toBeUndefined();
  });

  it("only the tenant's administrator sets them: a member gets 403, another tenant's administrator changes only their own", async () => {
    const member = await portalSession(bob);
    expect((await member.get('/portal/tool-overrides')).status).toBe(403);
    expect((await overrideForm(member, 'up_wipe', 'never-ask')).status).toBe(403);
    expect(
      (await member.post('/portal/tool-overrides/remove', new URLSearchParams({ _csrf: member.csrf, pattern: 'up_wipe' }))).status,
    ).toBe(403);
    expect(await overridesOf(alice)).toBeUndefined();
    expect(await (await member.get('/portal/approvals')).text()).not.toContain('/portal/tool-overrides');

    const other = await portalSession(carol);
    try {
      expect((await overrideForm(other, 'up_wipe', 'never-ask')).status).toBe(303);
      expect(await overridesOf(carol)).toEqual([{ pattern: 'up_wipe', mode: 'never-ask' }]);
      // Alice's tenant is untouched: her destructive call still waits.
      expect(await overridesOf(alice)).toBeUndefined();
      const before = deletes;
      expect(await execute(alice, 'up__wipe')).toMatchObject({ ok: false, error: { code: 'approval_required' } });
      expect(deletes).toBe(before);
    } finally {
      await setSettings(carol, {});
    }
    // Without the form's token, even the administrator changes nothing.
    const admin = await portalSession(ada);
    const forged = await admin.post('/portal/tool-overrides', new URLSearchParams({ pattern: 'up_wipe', mode: 'never-ask' }));
    expect(forged.status).toBe(403);
    expect(await overridesOf(alice)).toBeUndefined();
  });
});

describe('metrics', () => {
  it('counts approvals by event on the operator metrics', async () => {
    // Summed over every process of this Switchboard, as a scrape of a deployment would: each event
    // is counted where it happens (HTTP server, worker, or this process).
    const texts = await stack.metricsTexts();
    for (const event of ['requested', 'approved', 'denied', 'expired', 'cancelled']) {
      const pattern = new RegExp(`switchboard_approvals_total\\{event="${event}"\\} (\\d+)`);
      const total = texts.reduce((sum, text) => sum + Number(pattern.exec(text)?.[1] ?? 0), 0);
      expect(total, event).toBeGreaterThan(0);
    }
  });
});

describe('replay', () => {
  it('the approval workflows of this run replay against the current code, and carry no secret', async () => {
    const histories = (await rawHistoriesOf(stack.services.temporal, stack.env.TEMPORAL_TASK_QUEUE)).filter((h) =>
      h.workflowId.startsWith('approval-'),
    );
    expect(histories.length).toBeGreaterThan(5);
    const verdicts = await replayHistories(histories, {
      keyring: stack.services.keyring,
      workflowBundle: { codePath: inject('workflowBundlePath') },
    });
    expect(verdicts.filter((v) => !v.ok)).toEqual([]);
    for (const { history } of histories) expect(historyText(history)).not.toContain(PIN);
    // RECORD_HISTORIES=1 refreshes the fixtures (one closed approval per outcome), which
    // test/integration/operators.test.ts replays with every other recorded history.
    if (process.env.RECORD_HISTORIES === '1') {
      const { writeFileSync } = await import('node:fs');
      const fixtures = new URL('../fixtures/histories/', import.meta.url).pathname;
      for (const outcome of ['APPROVED', 'DENIED', 'EXPIRED', 'CANCELLED']) {
        for (const { workflowId, history } of histories) {
          const description = await stack.services.temporal.workflow.getHandle(workflowId).describe();
          if (description.status.name === 'RUNNING' || description.searchAttributes.SwitchboardOutcome?.[0] !== outcome) continue;
          writeFileSync(`${fixtures}approval-${outcome.toLowerCase()}.json`, historyToFixture(workflowId, history));
          break;
        }
      }
    }
  });
});

describe('organisation accounts', () => {
  it('orgApproverRoles: a call on an organisation account needs an approver other than the caller; the caller cannot decide it', async () => {
    const tenantId = alice.user.tenantId;
    await setSettings(alice, { orgApproverRoles: ['admin'] });
    try {
      const { approval } = await createApproval(pool, stack.services.keyring, {
        callKey: `org-call-${randomBytes(4).toString('hex')}`,
        tenantId,
        requesterUserId: alice.user.id,
        call: { tool: 'up__echo', args: {} },
        accountId: null,
        accountLabel: 'Team account',
        accountScope: 'tenant',
        summary: { tool: 'up__echo', account: 'Team account', arguments: {} },
        shownArguments: {},
        ttlSec: 600,
      });
      const caller = (user: TestUser) => ({ tenantId, userId: user.user.id, roles: user.user.roles });
      // The caller (self is an approver of their own calls, but not on organisation accounts here), a member: not theirs to decide.
      expect(await approvalFor({ pool }, caller(alice), approval.id)).toBeUndefined();
      expect(await approvalFor({ pool }, caller(bob), approval.id)).toBeUndefined();
      expect((await approvalFor({ pool }, caller(ada), approval.id))?.id).toBe(approval.id);
      // Their own account's calls still follow approverRoles (self).
      const own = await gatedDelete(alice);
      expect((await approvalFor({ pool }, caller(alice), own.approvalId))?.id).toBe(own.approvalId);
    } finally {
      await setSettings(alice, {});
    }
  });
});

describe('an approval whose workflow an operator closed', () => {
  it('a later approve runs nothing and the approval ends (waiters hear EXPIRED), instead of APPROVED with no result forever', async () => {
    const { id, approvalId } = await gatedDelete(alice);
    await stack.services.temporal.workflow.getHandle(approvalWorkflowId(approvalId)).terminate('operator cleanup');
    const decided = await decide(
      { pool, temporal: stack.services.temporal, logger: stack.services.logger },
      { tenantId: alice.user.tenantId, userId: ada.user.id, roles: ada.user.roles },
      approvalId,
      'APPROVED',
      '',
    );
    expect(decided.result).toBe('decided');
    expect((await waitFor(alice, approvalId, 1)).body).toEqual({ status: 'EXPIRED' });
    // The note was never deleted.
    expect((await execute(alice, 'jots__get_note', { id })).ok).toBe(true);
  });
});

describe('bounds', () => {
  it(`a user with ${MAX_PENDING_APPROVALS_PER_USER} approvals waiting gets no more (nothing runs), until some are decided`, async () => {
    const hal = await world.user({ tenantId: alice.user.tenantId });
    for (let i = 0; i < MAX_PENDING_APPROVALS_PER_USER; i++) {
      await createWaitingApproval(stack, hal, `bound-${hal.user.id}-${i}`);
    }
    const id = await newNote(hal);
    const answer = await execute(hal, 'jots__delete_note', { id });
    expect(answer).toMatchObject({ ok: false, error: { code: 'tool_failed' } });
    expect(answer.error.message).toContain(`${MAX_PENDING_APPROVALS_PER_USER} of your calls already wait`);
    expect((await execute(hal, 'jots__get_note', { id })).ok).toBe(true);
  });

  it("gated calls run side by side never pass the bound: each is counted and recorded under the user's lock", async () => {
    const ivy = await world.user({ tenantId: alice.user.tenantId });
    const room = 3;
    for (let i = 0; i < MAX_PENDING_APPROVALS_PER_USER - room; i++) {
      await createWaitingApproval(stack, ivy, `bound-${ivy.user.id}-${i}`);
    }
    const ids = await Promise.all(Array.from({ length: 16 }, (_, i) => newNote(ivy, `note ${i}`)));
    // Sixteen gated calls at once, each its own batch: only the three that fit ask for approval.
    const answers = await Promise.all(ids.map((id) => execute(ivy, 'jots__delete_note', { id })));
    expect(answers.filter((a) => a.error?.code === 'approval_required')).toHaveLength(room);
    const refused = answers.filter((a) => a.error?.code === 'tool_failed');
    expect(refused).toHaveLength(16 - room);
    for (const a of refused) expect(a.error.message).toContain(`${MAX_PENDING_APPROVALS_PER_USER} of your calls already wait`);
    const { rows } = await pool.query(`SELECT count(*)::int AS n FROM approvals WHERE requester_user_id = $1 AND status = 'PENDING'`, [
      ivy.user.id,
    ]);
    expect(rows[0].n).toBe(MAX_PENDING_APPROVALS_PER_USER);
    // Another user of the same tenant is not held by ivy's bound.
    expect((await gatedDelete(await world.user({ tenantId: alice.user.tenantId }))).approvalId).toMatch(/^apr_/);
  });
});
