import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Client, type WorkflowHandle } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import type { History } from '@temporalio/common/lib/proto-utils.js';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { replayHistories } from '../../bin/support/replay.js';
import { connectionWorkflowId } from '../../core/ids.js';
import { insertAccount, resealCredentials } from '../../features/accounts/store/accounts.js';
import { credentialAad } from '../../features/accounts/store/credential-seal.js';
import { completeConnection } from '../../features/connections/complete.js';
import { getAttempt } from '../../features/connections/store/connection-attempts.js';
import { ASSERTION_HEADER, newAssertionKeyPair, signAssertion } from '../../features/sources/assertion.js';
import { createSourceKey } from '../../features/sources/store/source-keys.js';
import { Keyring } from '../../platform/database/keyring.js';
import { createLogger } from '../../platform/telemetry/logger.js';
import { KeyringPayloadCodec, UNSEALED_MESSAGE } from '../../platform/temporal/payload-codec.js';
import { FIXTURE_KEY, FIXTURE_KEY_ID, FIXTURE_KEYRING_ENV } from '../support/fixture-key.js';
import { createTestUser, LogCapture, startWorld } from '../support/harness.js';
import { historyFromFixture, historyText, historyToFixture, rawHistoriesOf } from '../support/history-text.js';
import { sealBeforeKeySplit } from '../support/legacy-seal.js';
import { freePort } from '../support/ports.js';

const FIXTURES = new URL('../fixtures/histories/', import.meta.url).pathname;
const github = {
  clientId: 'gh-ops',
  clientSecret: 'gh-ops-client-secret-PLANTED',
  redirectUris: ['http://127.0.0.1/cb'],
  rotateRefreshTokens: true,
};

/** The platform's own tenant and the one person the operator's environment names as codec operator. */
const PLATFORM_TENANT = 'ten_platform_ops';
const OPS_EMAIL = 'ops@platform.example';
/** Every secret handed out during the run; none may be found in clear anywhere. */
const planted = new Set<string>([github.clientSecret]);

const world = await startWorld({
  clients: { github },
  apis: true,
  env: {
    // A fixed, test-only key, so the histories recorded here can be kept as replay fixtures.
    ENCRYPTION_KEYS: FIXTURE_KEYRING_ENV,
    CODEC_OPERATOR_TENANT: PLATFORM_TENANT,
    CODEC_OPERATORS: OPS_EMAIL,
    // The operator port, where /metrics is (finding 14).
    METRICS_PORT: String(await freePort()),
  },
});
const { auth, apis, stack } = world;
auth.provider.on('grant.success', (ctx: any) => {
  for (const v of [ctx.oidc.params?.refresh_token, ctx.body?.access_token, ctx.body?.refresh_token])
    if (typeof v === 'string') planted.add(v);
});
const operator = await world.user({ tenantId: PLATFORM_TENANT, email: OPS_EMAIL, roles: ['member'] });
const member = await world.user({ roles: ['member'] });

const PLANTED_ARG = 'planted-argument-value-7f3a';
/** Text only a (stored) tool result carries: sealed in Postgres, never in clear anywhere. */
const PLANTED_RESULT = 'planted-result-text-4c1d9e';
planted.add(PLANTED_RESULT);

/** Connect, wait, time out, refresh and execute, as users would: the histories this test reads. */
async function runRealWorkloads() {
  const { services } = stack;
  const tokens = await auth.issueTokens('ops-octo', github.clientId);
  planted.add(tokens.accessToken).add(tokens.refreshToken);
  await insertAccount(services.pool, services.keyring, {
    tenantId: member.user.tenantId,
    ownerUserId: member.user.id,
    integration: 'github',
    label: 'ops-octo',
    grantedScopes: ['repo', 'read:user'],
    accessExpiresAt: new Date(Date.now() - 1000),
    credential: { type: 'oauth2', accessToken: tokens.accessToken, refreshToken: tokens.refreshToken },
  });
  // An expired token: the first call refreshes it.
  await member.call('execute_tools', {
    executions: [
      { tool: 'github_get_authenticated_user' },
      { tool: 'github_list_repos', args: { perPage: 2 } },
      { tool: 'github_create_issue', args: { owner: 'x', repo: PLANTED_ARG } },
    ],
  });
  // A result large enough to be stored outside history (claim check): sealed in Postgres, a reference in history.
  const bigRepos = Array.from({ length: 40 }, (_, i) => ({
    full_name: `ops-octo/big-${i}`,
    private: false,
    description: `${PLANTED_RESULT} ${'d'.repeat(100)}`,
    default_branch: 'main',
    updated_at: '2026-01-01T00:00:00Z',
  }));
  apis.behave.set('/github/user/repos', { status: 200, body: bigRepos, times: 1 });
  const stored = await member.call('execute_tools', { executions: [{ tool: 'github_list_repos', args: { perPage: 40 } }] });
  expect(stored.body.results[0].result).toHaveLength(40);
  apis.behave.set('/github/user', { status: 500, times: 1 });
  await member.call('connections_execute', { name: 'github__get_authenticated_user', arguments: {} });

  // A connection completed the way the callback completes it, and one that times out.
  const started = await member.call('connect', { integration: 'github' });
  const waiting = member.call('wait_for_connection', { connectionId: started.body.connectionId, timeoutSec: 60 });
  await new Promise((r) => setTimeout(r, 300));
  const attempt = await getAttempt(services.pool, started.body.connectionId);
  const more = await auth.issueTokens('ops-octo-2', github.clientId);
  planted.add(more.accessToken).add(more.refreshToken);
  await completeConnection(services, attempt!, { label: 'ops-octo-2', credential: { type: 'oauth2', ...more } });
  expect((await waiting).body).toEqual({ status: 'CONNECTED' });
  const timedOut = await member.call('connect', { integration: 'github' });
  expect((await member.call('wait_for_connection', { connectionId: timedOut.body.connectionId, timeoutSec: 1 })).body).toEqual({
    status: 'TIMEOUT',
  });
  await services.temporal.workflow.getHandle(connectionWorkflowId(timedOut.body.connectionId)).result();
}
beforeAll(runRealWorkloads, 120_000);

/** Finished workflows of this run, fetched by a client with no codec: what Temporal stores and shows. */
async function rawHistories(): Promise<{ workflowId: string; history: History; text: string }[]> {
  const raw = new Client({ connection: stack.services.connection, namespace: stack.services.config.TEMPORAL_NAMESPACE });
  const all = await rawHistoriesOf(raw, stack.env.TEMPORAL_TASK_QUEUE);
  return all
    .filter((h) => (h.history.events?.length ?? 0) > 2 && !h.workflowId.startsWith(FORGED))
    .map((h) => ({ ...h, text: historyText(h.history) }));
}

/** Workflows this file forges through a raw client (finding 7); kept out of the replay and leak checks. */
const FORGED = 'forged-';

const toJsonPayload = (p: { metadata?: Record<string, Uint8Array> | null; data?: Uint8Array | null }) => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
  data: Buffer.from(p.data ?? []).toString('base64'),
});

/** A payload as a client without Switchboard's codec writes it: plain JSON. */
const plainJson = (value: unknown) => ({
  metadata: { encoding: Buffer.from('json/plain') },
  data: Buffer.from(JSON.stringify(value)),
});

const codecPost = (direction: 'decode' | 'encode', headers: Record<string, string>, payloads: unknown[]) =>
  fetch(`${stack.baseUrl}/codec/${direction}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ payloads }),
  });

describe('payload encryption', () => {
  it('history holds ciphertext: every payload is binary/encrypted, tool arguments and results unreadable', async () => {
    const histories = await rawHistories();
    expect(histories.length).toBeGreaterThanOrEqual(4);
    const all = histories.map((h) => h.text).join('\n');
    expect(all).not.toContain(PLANTED_ARG);
    expect(all).not.toContain('ops-octo/repo-0');
    const encodings: string[] = [];
    const collect = (value: unknown) => {
      if (value && typeof value === 'object' && !(value instanceof Uint8Array)) {
        const metadata = (value as { metadata?: Record<string, Uint8Array> }).metadata;
        if (metadata?.encoding && 'data' in value) encodings.push(Buffer.from(metadata.encoding).toString());
        // Search attributes are indexed by Temporal and never encrypted (they carry ids only).
        for (const [k, v] of Object.entries(value)) if (k !== 'searchAttributes') collect(v);
      }
    };
    const coreMarkerData: unknown[] = [];
    for (const h of histories) {
      for (const event of h.history.events ?? []) {
        const marker = event.markerRecordedEventAttributes;
        if (!marker) {
          collect(event);
          continue;
        }
        // Temporal Core writes its own bookkeeping into markers as plain JSON (a patch's id; a
        // local activity's sequence number, type and times), outside any codec: everything
        // else a marker holds — a local activity's result or failure — is ours, and encrypted.
        const { 'patch-data': patchData, data, ...ours } = marker.details ?? {};
        for (const plain of [patchData, data]) {
          for (const p of plain?.payloads ?? []) coreMarkerData.push(JSON.parse(Buffer.from(p.data ?? []).toString()));
        }
        collect({ ...marker, details: ours });
      }
    }
    expect(encodings.length).toBeGreaterThan(10);
    expect(new Set(encodings)).toEqual(new Set(['binary/encrypted']));
    const coreKeys = new Set([
      'id',
      'deprecated',
      'seq',
      'attempt',
      'activity_id',
      'activity_type',
      'complete_time',
      'backoff',
      'original_schedule_time',
    ]);
    expect(coreMarkerData.length).toBeGreaterThan(0);
    for (const data of coreMarkerData) expect(Object.keys(data as object).filter((k) => !coreKeys.has(k))).toEqual([]);
  });

  it('failure messages and stack traces are encoded too', async () => {
    const raw = new Client({ connection: stack.services.connection });
    const { failureConverter } = await import('../../platform/temporal/failure-converter.js');
    const failure = failureConverter.errorToFailure(new Error(`boom ${PLANTED_ARG}`), raw.options.loadedDataConverter.payloadConverter);
    expect(failure.message).toBe('Encoded failure');
    expect(failure.stackTrace).toBe('');
    expect(JSON.stringify(failure.encodedAttributes)).not.toContain('boom');
  });
});

describe('the codec endpoint', () => {
  it('decodes for an operator, refuses others, and limits CORS to the Temporal UI origin', async () => {
    const histories = await rawHistories();
    const batch = histories.find((h) => h.workflowId.startsWith('tool-batch-'))!;
    const input = toJsonPayload(batch.history.events![0].workflowExecutionStartedEventAttributes!.input!.payloads![0]);
    const post = (headers: Record<string, string>) => codecPost('decode', headers, [input]);

    const decoded = await post({ authorization: `Bearer ${operator.apiKey}`, origin: 'http://localhost:8233' });
    expect(decoded.status).toBe(200);
    expect(decoded.headers.get('access-control-allow-origin')).toBe('http://localhost:8233');
    const [payload] = (await decoded.json()).payloads;
    expect(Buffer.from(payload.metadata.encoding, 'base64').toString()).toBe('json/plain');
    expect(JSON.parse(Buffer.from(payload.data, 'base64').toString())).toMatchObject({ userId: member.user.id, calls: expect.any(Array) });

    expect((await post({})).status).toBe(401);
    expect((await post({ authorization: `Bearer ${member.apiKey}` })).status).toBe(403);
    expect((await post({ authorization: `Bearer ${operator.apiKey}`, origin: 'https://evil.example' })).status).toBe(403);
    const preflight = await fetch(`${stack.baseUrl}/codec/decode`, {
      method: 'OPTIONS',
      headers: { origin: 'http://127.0.0.1:8233', 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-credentials')).toBe('true');
    const bad = await post({ authorization: `Bearer ${operator.apiKey}`, 'x-ignore': '1' }).then(() =>
      fetch(`${stack.baseUrl}/codec/decode`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${operator.apiKey}` },
        body: '{"payloads": 3}',
      }),
    );
    expect(bad.status).toBe(400);
  });

  it('finding 6: a tenant admin who gives herself a role named operator (or any role) gets 403 from /codec/decode and /codec/encode', async () => {
    // Mallory administers her own tenant and holds every role she could think of, "operator" included.
    const mallory = await createTestUser(stack, { roles: ['member', 'admin', 'operator', 'codec', 'platform-operator'] });
    const [batch] = (await rawHistories()).filter((h) => h.workflowId.startsWith('tool-batch-'));
    const input = toJsonPayload(batch.history.events![0].workflowExecutionStartedEventAttributes!.input!.payloads![0]);
    const decode = await codecPost('decode', { authorization: `Bearer ${mallory.apiKey}` }, [input]);
    expect(decode.status).toBe(403);
    expect(await decode.json()).toEqual({ error: expect.stringContaining('CODEC_OPERATORS') });
    const encode = await codecPost('encode', { authorization: `Bearer ${mallory.apiKey}` }, [toJsonPayload(plainJson({ x: 1 }))]);
    expect(encode.status).toBe(403);
    // A user of the platform tenant who is not listed is refused too: the list, not the tenant, grants it.
    const colleague = await createTestUser(stack, { tenantId: PLATFORM_TENANT, roles: ['member', 'operator'] });
    expect((await codecPost('decode', { authorization: `Bearer ${colleague.apiKey}` }, [input])).status).toBe(403);
  });

  it("finding 6: a source key made from the codec operator's account decodes nothing, with or without an assertion", async () => {
    // The remote's operator made a source key for instance "eu" with herself as the template user (finding 3): the
    // key, held by eu's operator, acts only as eu's delegates, never as the operator herself, and never on the codec.
    const pair = newAssertionKeyPair();
    const sourceKey = await createSourceKey(stack.services.pool, {
      tenantId: PLATFORM_TENANT,
      templateUserId: operator.user.id,
      source: 'eu',
      publicKey: pair.publicKey,
    });
    const [batch] = (await rawHistories()).filter((h) => h.workflowId.startsWith('tool-batch-'));
    const input = toJsonPayload(batch.history.events![0].workflowExecutionStartedEventAttributes!.input!.payloads![0]);
    const assertion = await signAssertion(pair.privateKey, { tenant: 'ten_eu', user: 'usr_eu' });
    const attempts: Record<string, string>[] = [
      { authorization: `Bearer ${sourceKey.key}` },
      { authorization: `Bearer ${sourceKey.key}`, [ASSERTION_HEADER]: assertion },
    ];
    for (const headers of attempts) {
      const decode = await codecPost('decode', headers, [input]);
      expect(decode.status).toBe(403);
      expect(await decode.json()).toEqual({ error: expect.stringContaining('CODEC_OPERATORS') });
    }
  });

  it('finding 6: the configured operator decodes (old fixture payloads too); encode is refused; every use is logged without contents', async () => {
    const [batch] = (await rawHistories()).filter((h) => {
      const first = h.history.events![0].workflowExecutionStartedEventAttributes;
      return h.workflowId.startsWith('tool-batch-') && first;
    });
    const sealed = batch.history.events![0].workflowExecutionStartedEventAttributes!.input!.payloads![0];
    // Payloads sealed now name their owning workflow (which stands for the scheme); fixtures recorded before the key split name neither, and still open.
    expect(sealed.metadata!['encryption-scheme']).toBeUndefined();
    expect(JSON.parse(Buffer.from(sealed.metadata!['encryption-owner']!).toString())).toEqual([
      stack.services.config.TEMPORAL_NAMESPACE,
      batch.workflowId,
    ]);
    const fixture = historyFromFixture(readFileSync(`${FIXTURES}tool-batch-1.json`, 'utf8'));
    const legacy = fixture.history.events![0].workflowExecutionStartedEventAttributes!.input!.payloads![0];
    expect(legacy.metadata!['encryption-scheme']).toBeUndefined();

    const logsBefore = stack.logs.text().length;
    const auth = { authorization: `Bearer ${operator.apiKey}`, 'x-namespace': 'default' };
    const decoded = await codecPost('decode', auth, [toJsonPayload(sealed), toJsonPayload(legacy)]);
    expect(decoded.status).toBe(200);
    const [fresh, old] = (await decoded.json()).payloads.map((p: { data: string }) => JSON.parse(Buffer.from(p.data, 'base64').toString()));
    expect(fresh).toMatchObject({ tenantId: member.user.tenantId, calls: expect.any(Array) });
    expect(old).toMatchObject({ tenantId: expect.any(String), calls: expect.any(Array) });

    const encode = await codecPost('encode', auth, [toJsonPayload(plainJson({ tenantId: member.user.tenantId }))]);
    expect(encode.status).toBe(403);
    expect(await encode.json()).toEqual({ error: expect.stringContaining('CODEC_ALLOW_ENCODE') });

    const lines = stack.logs
      .text()
      .slice(logsBefore)
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    expect(lines.filter((l) => l.codec)).toEqual([
      expect.objectContaining({
        msg: 'codec decode',
        codec: { direction: 'decode', payloads: 2, namespace: 'default', userId: operator.user.id, via: 'api-key' },
      }),
      expect.objectContaining({
        msg: expect.stringContaining('codec encode refused'),
        codec: expect.objectContaining({ direction: 'encode', userId: operator.user.id }),
      }),
    ]);
    const logged = stack.logs.text().slice(logsBefore);
    for (const content of [JSON.stringify(fresh.calls), JSON.stringify(old.calls), toJsonPayload(sealed).data])
      expect(logged).not.toContain(content);
  });

  it('finding 6: a credential row sealed with the raw key before the split still works, and `keys reseal` moves it to the at-rest key', async () => {
    const { pool, keyring } = stack.services;
    const tokens = await auth.issueTokens('legacy-octo', github.clientId);
    planted.add(tokens.accessToken).add(tokens.refreshToken);
    const owner = await createTestUser(stack, { roles: ['member'] });
    const account = await insertAccount(pool, keyring, {
      tenantId: owner.user.tenantId,
      ownerUserId: owner.user.id,
      integration: 'github',
      label: 'legacy-octo',
      grantedScopes: ['repo', 'read:user'],
      accessExpiresAt: new Date(Date.now() + 3_600_000),
      credential: { type: 'oauth2', accessToken: tokens.accessToken, refreshToken: tokens.refreshToken },
    });
    const credential = JSON.stringify({ type: 'oauth2', accessToken: tokens.accessToken, refreshToken: tokens.refreshToken });
    const old = sealBeforeKeySplit(
      Buffer.from(FIXTURE_KEY, 'base64'),
      FIXTURE_KEY_ID,
      credential,
      credentialAad(owner.user.tenantId, account.id),
    );
    await pool.query('UPDATE accounts SET credential_sealed = $2 WHERE id = $1', [account.id, old]);

    const me = async () => (await owner.call('execute_tools', { executions: [{ tool: 'github_get_authenticated_user' }] })).body.results[0];
    expect(await me()).toEqual({ result: expect.objectContaining({ login: 'legacy-octo' }) });
    expect(await resealCredentials(pool, keyring)).toBeGreaterThanOrEqual(1);
    const { rows } = await pool.query('SELECT credential_sealed FROM accounts WHERE id = $1', [account.id]);
    expect(rows[0].credential_sealed.startsWith(`v2.${FIXTURE_KEY_ID}.`)).toBe(true);
    expect(await me()).toEqual({ result: expect.objectContaining({ login: 'legacy-octo' }) });
  });
});

describe('search attributes', () => {
  it('finds runs by tenant, user, integration, tool and outcome', async () => {
    const { temporal } = stack.services;
    const count = async (query: string) => {
      let n = 0;
      for await (const _ of temporal.workflow.list({ query: `TaskQueue = '${stack.env.TEMPORAL_TASK_QUEUE}' AND ${query}` })) n++;
      return n;
    };
    expect(await count(`SwitchboardUser = '${member.user.id}' AND SwitchboardTool = 'github__create_issue'`)).toBe(1);
    expect(
      await count(`SwitchboardTenant = '${member.user.tenantId}' AND SwitchboardOutcome IN ('failed', 'partial')`),
    ).toBeGreaterThanOrEqual(2);
    expect(await count(`SwitchboardIntegration = 'github' AND SwitchboardOutcome = 'CONNECTED'`)).toBe(1);
    expect(await count(`SwitchboardIntegration = 'github' AND SwitchboardOutcome = 'EXPIRED'`)).toBe(1);
  });
});

describe('replay', () => {
  it('replays the histories of this run against the current code', async () => {
    const histories = await rawHistories();
    const verdicts = await replayHistories(histories, {
      keyring: stack.services.keyring,
      workflowBundle: { codePath: inject('workflowBundlePath') },
    });
    expect(verdicts.filter((v) => !v.ok)).toEqual([]);
    expect(verdicts.length).toBe(histories.length);
    // RECORD_HISTORIES=1 npm test -- test/integration/operators refreshes the fixtures.
    if (process.env.RECORD_HISTORIES === '1') {
      mkdirSync(FIXTURES, { recursive: true });
      for (const { workflowId, history } of histories) {
        const kind = workflowId.replace(/-[0-9a-f-]{20,}$/, '');
        const name = `${kind}-${readdirSync(FIXTURES).filter((f) => f.startsWith(kind)).length + 1}.json`;
        if (!existsSync(`${FIXTURES}${name}`)) writeFileSync(`${FIXTURES}${name}`, historyToFixture(workflowId, history));
      }
    }
  });

  it('npm run replay fetches a live history and prints a verdict', async () => {
    const { execFile } = await import('node:child_process');
    const [batch] = (await rawHistories()).filter((h) => h.workflowId.startsWith('tool-batch-'));
    const run = (workflowId: string) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        execFile(
          process.execPath,
          ['--import', 'tsx', 'bin/replay.ts', workflowId],
          { cwd: new URL('../..', import.meta.url).pathname, env: { ...process.env, ...stack.env } },
          (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
        );
      });
    const [good, missing] = await Promise.all([run(batch.workflowId), run('tool-batch-does-not-exist')]);
    expect(good.code).toBe(0);
    expect(good.stdout).toContain(`✔ ${batch.workflowId}: replays deterministically`);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^replay: /);
  });

  it('replays every recorded fixture in test/fixtures/histories', async () => {
    const files = readdirSync(FIXTURES).filter((f) => f.endsWith('.json'));
    expect(files.length).toBeGreaterThanOrEqual(4);
    const histories = files.map((f) => ({ ...historyFromFixture(readFileSync(`${FIXTURES}${f}`, 'utf8')), workflowId: f }));
    const verdicts = await replayHistories(histories, {
      keyring: new Keyring(new Map([[FIXTURE_KEYRING_ENV.split(':')[0], Buffer.from(FIXTURE_KEYRING_ENV.split(':')[1], 'base64')]])),
      workflowBundle: { codePath: inject('workflowBundlePath') },
    });
    expect(verdicts).toEqual(files.map((f) => ({ workflowId: f, ok: true })));
  });
});

describe('logs and metrics', () => {
  it('logs one line per request with request id, caller and tenant, and echoes the id', async () => {
    const res = await fetch(`${stack.baseUrl}/v1/tools/list_integrations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${member.apiKey}`, 'content-type': 'application/json', 'x-request-id': 'req-ops-1' },
      body: '{}',
    });
    expect(res.headers.get('x-request-id')).toBe('req-ops-1');
    const line = stack.logs
      .text()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .find((l) => l.requestId === 'req-ops-1' && l.msg === 'request');
    expect(line).toMatchObject({
      method: 'POST',
      path: '/v1/tools/list_integrations',
      status: 200,
      tenantId: member.user.tenantId,
      userId: member.user.id,
    });
  });

  it('redacts credentials wherever a log line carries them', () => {
    const capture = new LogCapture();
    const logger = createLogger({ level: 'info', destination: capture });
    logger.info(
      {
        req: { headers: { authorization: 'Bearer sbk_secret', cookie: 'sb_session=abc' } },
        credential: { accessToken: 'at-secret', refreshToken: 'rt-secret', fields: { apiKey: 'k' }, cookies: [{ value: 'c' }] },
      },
      'x',
    );
    const text = capture.text();
    for (const secret of ['sbk_secret', 'sb_session=abc', 'at-secret', 'rt-secret', '"apiKey":"k"']) expect(text).not.toContain(secret);
    expect(text).toContain('[redacted]');
  });

  it('serves tool-call, refresh, wait and worker metrics at /metrics on the operator port', async () => {
    const text = await (await fetch(`${stack.http.operator!.url}/metrics`)).text();
    expect(text).toMatch(/switchboard_tool_calls_total\{provider="github",tool="github__get_authenticated_user",outcome="ok"\} [1-9]/);
    expect(text).toMatch(/switchboard_tool_calls_total\{provider="github",tool="github__get_authenticated_user",outcome="tool_failed"\} 1/);
    expect(text).toMatch(/switchboard_token_refreshes_total\{provider="github",outcome="ok"\} 1/);
    expect(text).toContain('switchboard_tool_call_duration_seconds_bucket');
    expect(text).toMatch(/switchboard_pending_connection_waits 0/);
    expect(text).toMatch(/switchboard_worker_cached_workflows \d+/);
    expect(text).toContain('switchboard_http_request_duration_seconds_bucket');
  });
});

describe('secrets never in clear', () => {
  it('no planted token, refresh token or client secret in histories, logs, the audit table or a dump of the database', async () => {
    const secrets = [...planted].filter((s) => s.length >= 8);
    expect(secrets.length).toBeGreaterThanOrEqual(6);
    const { pool } = stack.services;
    const { rows: tables } = await pool.query(`SELECT table_name FROM information_schema.tables WHERE table_schema = $1`, [stack.schema]);
    const dump: string[] = [];
    for (const { table_name } of tables) dump.push(JSON.stringify((await pool.query(`SELECT * FROM ${stack.schema}.${table_name}`)).rows));
    const haystacks = {
      histories: (await rawHistories()).map((h) => h.text).join('\n'),
      logs: stack.logs.text(),
      audit: JSON.stringify((await pool.query('SELECT * FROM audit_log')).rows),
      database: dump.join('\n'),
    };
    for (const [where, text] of Object.entries(haystacks)) {
      for (const secret of secrets) expect(text.includes(secret), `a planted secret in ${where}`).toBe(false);
    }
  });
});

describe('finding 7: only input sealed with the payload key runs', () => {
  /** Someone who can reach Temporal but holds no key: a client without Switchboard's codec. */
  const outsider = () => new Client({ connection: stack.services.connection, namespace: stack.services.config.TEMPORAL_NAMESPACE });
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  /** The first workflow task (or activity) failure in a run's history, read the way Temporal UI shows it (failure messages go through the codec). */
  async function workflowTaskFailure(handle: WorkflowHandle, of: 'workflow task' | 'activity' = 'workflow task'): Promise<string> {
    for (const deadline = Date.now() + 20_000; Date.now() < deadline; await sleep(200)) {
      const events = (await handle.fetchHistory()).events ?? [];
      const failure =
        of === 'workflow task'
          ? events.find((e) => e.workflowTaskFailedEventAttributes)?.workflowTaskFailedEventAttributes?.failure
          : events.find((e) => e.activityTaskFailedEventAttributes)?.activityTaskFailedEventAttributes?.failure;
      if (!failure) continue;
      if (!failure.encodedAttributes) return failure.message ?? '';
      const [attributes] = await new KeyringPayloadCodec(stack.services.keyring).decode([failure.encodedAttributes]);
      return JSON.parse(Buffer.from(attributes.data!).toString()).message;
    }
    throw new Error(`no ${of} of ${handle.workflowId} failed`);
  }

  const auditRowsOf = async (userId: string) =>
    Number((await stack.services.pool.query('SELECT count(*) FROM audit_log WHERE actor_user_id = $1', [userId])).rows[0].count);

  it('finding 7: toolBatchWorkflow started with plain JSON naming a real user runs nothing, writes no audit row, and its workflow task fails saying why', async () => {
    const requestsBefore = apis.requests.length;
    const auditBefore = await auditRowsOf(member.user.id);
    // The member has a stored GitHub account: a forged batch naming her would run with her token.
    const handle = await outsider().workflow.start('toolBatchWorkflow', {
      taskQueue: stack.env.TEMPORAL_TASK_QUEUE,
      workflowId: `${FORGED}batch-${randomUUID()}`,
      args: [
        {
          tenantId: member.user.tenantId,
          userId: member.user.id,
          calls: [{ tool: 'github__get_authenticated_user', args: {} }],
          timeoutMs: 30_000,
          maxResultBytes: 32_768,
        },
      ],
    });
    try {
      expect(await workflowTaskFailure(handle)).toContain(UNSEALED_MESSAGE);
      await sleep(1_000);
      expect(apis.requests.length).toBe(requestsBefore);
      expect(await auditRowsOf(member.user.id)).toBe(auditBefore);
      expect((await handle.describe()).status.name).toBe('RUNNING');
    } finally {
      await handle.terminate('finding 7 test: forged input');
    }
  });

  it('a sealed batch input copied out of a history into a workflow of another id runs nothing (attacker: can read histories and start workflows, holds no key)', async () => {
    const ran = await member.call('execute_tools', { executions: [{ tool: 'github_get_authenticated_user' }] });
    expect(ran.body.results[0]).toHaveProperty('result');
    const codec = new KeyringPayloadCodec(stack.services.keyring);
    // The member's own batch, as anyone who can read the namespace's histories sees it: sealed.
    let copied: { payloads: Payload[] } | undefined;
    for (const deadline = Date.now() + 10_000; !copied && Date.now() < deadline; await sleep(200)) {
      for (const { history } of await rawHistories()) {
        const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
        const payloads = (started?.input?.payloads ?? []) as Payload[];
        if (started?.workflowType?.name !== 'toolBatchWorkflow' || payloads.length === 0) continue;
        const opened = Buffer.from((await codec.decode(payloads))[0].data ?? []).toString();
        if (opened.includes(member.user.id)) copied = { payloads };
      }
    }
    if (!copied) throw new Error("no toolBatchWorkflow of the member's found in the histories");
    expect(JSON.parse(Buffer.from(copied.payloads[0].metadata?.['encryption-owner'] ?? []).toString())[1]).not.toBe('');
    const requestsBefore = apis.requests.length;
    const auditBefore = await auditRowsOf(member.user.id);
    const workflowId = `${FORGED}copied-batch-${randomUUID()}`;
    await stack.services.connection.workflowService.startWorkflowExecution({
      namespace: stack.services.config.TEMPORAL_NAMESPACE,
      workflowId,
      workflowType: { name: 'toolBatchWorkflow' },
      taskQueue: { name: stack.env.TEMPORAL_TASK_QUEUE },
      input: copied,
      identity: 'outsider',
      requestId: randomUUID(),
    });
    const handle = outsider().workflow.getHandle(workflowId);
    try {
      const failure = await workflowTaskFailure(handle);
      expect(failure).toContain(UNSEALED_MESSAGE);
      expect(failure).toContain('not this one');
      await sleep(1_000);
      expect(apis.requests.length).toBe(requestsBefore);
      expect(await auditRowsOf(member.user.id)).toBe(auditBefore);
    } finally {
      await handle.terminate('test: a copied sealed input');
    }
  });

  it('finding 7: connectionWorkflow started with plain JSON, and a plain "connected" signal to a real pending connection, are refused the same way', async () => {
    const forged = await outsider().workflow.start('connectionWorkflow', {
      taskQueue: stack.env.TEMPORAL_TASK_QUEUE,
      workflowId: `${FORGED}connection-${randomUUID()}`,
      args: [{ attemptId: 'conn_forged', tenantId: member.user.tenantId, userId: member.user.id, integration: 'github', ttlSec: 60 }],
    });
    try {
      expect(await workflowTaskFailure(forged)).toContain(UNSEALED_MESSAGE);
    } finally {
      await forged.terminate('finding 7 test: forged input');
    }

    const started = await member.call('connect', { integration: 'github' });
    const genuine = outsider().workflow.getHandle(connectionWorkflowId(started.body.connectionId));
    await genuine.signal('connectionResolved', { status: 'CONNECTED', accountId: 'acct_forged' });
    try {
      expect(await workflowTaskFailure(genuine)).toContain(UNSEALED_MESSAGE);
      expect((await getAttempt(stack.services.pool, started.body.connectionId))!.status).toBe('PENDING');
    } finally {
      await genuine.terminate('finding 7 test: forged signal');
    }
  });

  it("finding 7: an outsider's own workflow that schedules Switchboard's executeToolCall activity with plain input runs nothing", async () => {
    const requestsBefore = apis.requests.length;
    const auditBefore = await auditRowsOf(member.user.id);
    const { Worker } = await import('@temporalio/worker');
    const outsiderQueue = `${FORGED}queue-${randomUUID()}`;
    // The outsider's worker: no Switchboard plugin, no key.
    const worker = await Worker.create({
      connection: stack.services.connection,
      namespace: stack.services.config.TEMPORAL_NAMESPACE,
      taskQueue: outsiderQueue,
      workflowsPath: new URL('../support/forged-workflows.ts', import.meta.url).pathname,
    });
    const handle = await outsider().workflow.start('forgedToolCall', {
      taskQueue: outsiderQueue,
      workflowId: `${FORGED}activity-${randomUUID()}`,
      args: [{ switchboardTaskQueue: stack.env.TEMPORAL_TASK_QUEUE, tenantId: member.user.tenantId, userId: member.user.id }],
    });
    try {
      // Switchboard's worker fails the activity; the message is sealed, so read it through the codec.
      const message = await worker.runUntil(workflowTaskFailure(handle, 'activity'));
      expect(message).toContain(UNSEALED_MESSAGE);
      expect(message).toContain('executeToolCall');
    } finally {
      await handle.terminate('finding 7 test: forged activity input');
    }
    expect(apis.requests.length).toBe(requestsBefore);
    expect(await auditRowsOf(member.user.id)).toBe(auditBefore);
  }, 180_000);
});
