import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { approvalWorkflowId } from '../../core/ids.js';
import { updateTenantSettings } from '../../features/accounts/store/tenants.js';
import { decide } from '../../features/approvals/decide.js';
import { SEALED_ARGUMENT_KEY } from '../../features/execution/store/sealed-arguments.js';
import { signedInPage } from '../support/consent.js';
import { startWorld } from '../support/harness.js';
import { decodedHistoryText, historyText, type JsonPayload, rawHistoriesOf } from '../support/history-text.js';
import { startTestUpstream } from '../support/mcp-upstream-server.js';

// Secret tool arguments and what operators see. The payload codec seals every payload, but a codec
// operator decodes them (Temporal UI does, through /codec/decode): what a decoded history shows is
// what the operator sees. Attackers: an operator reading a tool batch's history in the UI; a hostile
// upstream echoing a secret argument back in its error; an agent (or an operator who is also a user)
// sending a sealed value it saw, or made up, as an argument.

/** Marked writeOnly in the tool's schema; its name says nothing. */
const PIN = 'planted-pin-5b7e19d3a1';
/** The same tool, behind an approval. */
const GATED_PIN = 'planted-gated-pin-77aa0e42';
/** format: password, and the upstream echoes it back in its error. */
const PASSWORD = 'planted-password-0c4f8a2e';
/** Unmarked by the schema; its name (`apiToken`) marks it. */
const NAMED = 'planted-named-token-93d1c0';
/** An argument of a tool this server cannot describe when the batch starts (an unknown name). */
const UNDESCRIBED = 'planted-undescribed-6e2b90';
/** The API key a person pastes on a connect link's page. */
const API_KEY = 'planted-api-key-4d8e61b0f2';
const SECRETS = [PIN, GATED_PIN, PASSWORD, NAMED, UNDESCRIBED, API_KEY];

const pins: string[] = [];
const upstream = await startTestUpstream({
  extraTools(server) {
    server.registerTool(
      'send_pin',
      {
        description: 'Sends a one-time PIN to a person',
        inputSchema: { to: z.string(), pin: z.string().meta({ writeOnly: true }) },
        annotations: { readOnlyHint: false, destructiveHint: false },
      },
      async ({ to, pin }) => {
        pins.push(pin);
        return { content: [{ type: 'text', text: `sent to ${to}` }] };
      },
    );
    server.registerTool(
      'sign_in',
      {
        description: 'Checks a password; a careless server, it repeats it in its error',
        inputSchema: { user: z.string(), password: z.string().meta({ format: 'password' }), apiToken: z.string().optional() },
        annotations: { readOnlyHint: true },
      },
      async ({ user, password, apiToken }) => ({
        isError: true,
        content: [{ type: 'text', text: `wrong password "${password}" (token ${apiToken}) for ${user}` }],
      }),
    );
  },
});

const keyed = await startTestUpstream({ apiKey: API_KEY });

const OPS_EMAIL = 'ops@history-secrets.example';
const world = await startWorld({
  env: {
    UPSTREAM_MCP_ALLOWED_HOSTS: '127.0.0.1',
    UPSTREAM_MCP_SERVERS: JSON.stringify([
      { name: 'up', displayName: 'Up', url: upstream.url },
      { name: 'keyed', displayName: 'Keyed', url: keyed.url, auth: { type: 'apikey', header: 'X-Api-Key', label: 'Key' } },
    ]),
    CODEC_OPERATOR_TENANT: 'ten_history_ops',
    CODEC_OPERATORS: OPS_EMAIL,
  },
});
world.onStop(() => Promise.all([upstream.close(), keyed.close()]));
const { stack } = world;
const alice = await world.user({ email: 'alice@history-secrets.example' });
const ada = await world.user({ tenantId: alice.user.tenantId, email: 'ada@history-secrets.example', roles: ['admin'] });
const bob = await world.user({ email: 'bob@history-secrets.example' });
const operator = await world.user({ tenantId: 'ten_history_ops', email: OPS_EMAIL });

const execute = (user: typeof alice, name: string, args: Record<string, unknown>) =>
  user.call('connections_execute', { name, arguments: args }).then((r) => r.body);

/** What Temporal UI shows the operator: every payload decoded by Switchboard's codec endpoint. */
async function decodeAsOperator(payloads: JsonPayload[]): Promise<JsonPayload[]> {
  const res = await fetch(`${stack.baseUrl}/codec/decode`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${operator.apiKey}` },
    body: JSON.stringify({ payloads }),
  });
  expect(res.status).toBe(200);
  return (await res.json()).payloads;
}

const histories = async () => rawHistoriesOf(stack.services.temporal, stack.env.TEMPORAL_TASK_QUEUE);

describe('secret tool arguments in workflow histories', () => {
  it('a secret argument reaches the tool, and neither the raw nor the decoded history of its batch holds it', async () => {
    // A search lists the upstream's tools: from then on this server knows send_pin's schema when a batch starts.
    expect((await alice.call('connections_search', { query: 'send a one-time PIN' })).status).toBe(200);
    expect(await execute(alice, 'up__send_pin', { to: 'ops', pin: PIN })).toEqual({ ok: true, result: 'sent to ops' });
    expect(pins).toContain(PIN);

    // The operator's view of that batch: the tool and its other arguments, the PIN sealed.
    const all = await histories();
    const decoded = await Promise.all(all.map((h) => decodedHistoryText(h.history, decodeAsOperator)));
    const batch = decoded.find((text) => text.includes('up__send_pin') && text.includes('"to":"ops"'));
    expect(batch).toBeDefined();
    expect(batch).toContain(`"pin":{"${SEALED_ARGUMENT_KEY}":"`);
    expect(batch).not.toContain(PIN);
  });

  it('an upstream that echoes a password argument in its error: the answer, the history and the logs show [redacted]', async () => {
    const answer = await execute(alice, 'up__sign_in', { user: 'alice', password: PASSWORD, apiToken: NAMED });
    expect(answer).toMatchObject({ ok: false, error: { code: 'tool_failed' } });
    expect(answer.error.message).toContain('wrong password "[redacted]" (token [redacted]) for alice');
    expect(JSON.stringify(answer)).not.toContain(PASSWORD);
  });

  it('a call of a tool the server cannot describe when its batch starts has all its arguments sealed', async () => {
    const answer = await execute(alice, 'up__not_a_tool', { key: UNDESCRIBED });
    expect(answer).toMatchObject({ ok: false, error: { code: 'not_found' } });
  });

  it('a gated call: its approval, its approved run and the batch that asked hold no secret, raw or decoded; the tool got the PIN', async () => {
    await updateTenantSettings(stack.services.pool, alice.user.tenantId, { approvalTools: ['send_pin'] });
    try {
      const asked = await execute(alice, 'up__send_pin', { to: 'gate', pin: GATED_PIN });
      expect(asked).toMatchObject({ ok: false, error: { code: 'approval_required', summary: { arguments: { pin: '[secret]' } } } });
      const { approvalId } = asked.error;
      const decided = await decide(
        { pool: stack.services.pool, temporal: stack.services.temporal, logger: stack.services.logger },
        { tenantId: ada.user.tenantId, userId: ada.user.id, roles: ada.user.roles },
        approvalId,
        'APPROVED',
        '',
      );
      expect(decided.result).toBe('decided');
      await stack.services.temporal.workflow.getHandle(approvalWorkflowId(approvalId)).result();
      const waited = await alice.call('wait_for_approval', { approvalId, timeoutSec: 10 });
      expect(waited.body).toMatchObject({ status: 'APPROVED', result: { result: 'sent to gate' } });
      expect(pins).toContain(GATED_PIN);
    } finally {
      await updateTenantSettings(stack.services.pool, alice.user.tenantId, {});
    }
  });

  it('an agent sending a sealed value it saw (another user’s) or made up: invalid_arguments, nothing reaches the upstream', async () => {
    const all = await histories();
    const decoded = (await Promise.all(all.map((h) => decodedHistoryText(h.history, decodeAsOperator)))).join('\n');
    const envelope = new RegExp(`\\{"\\${SEALED_ARGUMENT_KEY}":"[^"]+"\\}`).exec(decoded)?.[0];
    expect(envelope).toBeDefined();
    const before = pins.length;
    for (const [who, value] of [
      [bob, JSON.parse(envelope!)],
      [alice, { [SEALED_ARGUMENT_KEY]: 'v2.k1.bm90LXNlYWxlZA' }],
    ] as const) {
      const answer = await execute(who, 'up__send_pin', { to: 'mallory', pin: value });
      expect(answer).toMatchObject({ ok: false, error: { code: 'invalid_arguments' } });
      // The server sealed the value the schema marks secret (the envelope) once more: opened once, it is an object, not a PIN.
      expect(answer.error.message).toBe('Arguments do not fit the schema of up__send_pin.');
    }
    // In a place nothing is sealed by the server, a value that does not open is refused by name.
    const forged = await execute(alice, 'up__send_pin', { to: { [SEALED_ARGUMENT_KEY]: 'v2.k1.bm90LXNlYWxlZA' }, pin: '1234' });
    expect(forged).toMatchObject({ ok: false, error: { code: 'invalid_arguments' } });
    expect(forged.error.message).toContain(`a ${SEALED_ARGUMENT_KEY} value that was not sealed for this call`);
    expect(pins.length).toBe(before);
  });

  it('an API key pasted in the portal (never through connect: no workflow sees it); calls made with it carry none', async () => {
    const page = await signedInPage(await world.browser(), alice);
    try {
      await page.goto(`${stack.baseUrl}/portal/integrations/keyed`);
      await page.getByLabel('Key').fill(API_KEY);
      const [saved] = await Promise.all([
        page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/portal/integrations/keyed'),
        page.getByRole('button', { name: 'Test and save' }).click(),
      ]);
      expect(saved.status()).toBe(200);
    } finally {
      await page.context().close();
    }
    expect(await execute(alice, 'keyed__echo', { message: 'with the key' })).toEqual({ ok: true, result: 'echo: with the key' });
    expect(keyed.requests.some((r) => r.apiKey === API_KEY)).toBe(true);
  });

  it('no planted secret in any history (raw or decoded as the operator sees it), the logs or the audit table', async () => {
    const all = await histories();
    expect(all.length).toBeGreaterThanOrEqual(6);
    const raw = all.map((h) => historyText(h.history)).join('\n');
    const decoded = (await Promise.all(all.map((h) => decodedHistoryText(h.history, decodeAsOperator)))).join('\n');
    // Decoding worked: results and tool names read in clear.
    expect(decoded).toContain('sent to ops');
    expect(decoded).toContain('echo: with the key');
    const audit = JSON.stringify((await stack.services.pool.query('SELECT * FROM audit_log')).rows);
    const approvals = JSON.stringify((await stack.services.pool.query('SELECT * FROM approvals')).rows);
    for (const [where, text] of Object.entries({ raw, decoded, logs: stack.logs.text(), audit, approvals })) {
      for (const secret of SECRETS) expect(text.includes(secret), `${secret} in ${where}`).toBe(false);
    }
  });
});
