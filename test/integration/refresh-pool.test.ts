import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { CredentialStore } from '../../features/connections/credentials.js';
import { connectGithubAccount } from '../support/github-account.js';
import { createTestUser, startWorld, type TestUser } from '../support/harness.js';
import { startLocalServer } from '../support/local-server.js';

// Rotating refresh tokens: a second use of a spent one revokes the grant, so two refreshes of one
// account would show up as a failed call.
const client = {
  clientId: 'slow-token',
  clientSecret: 'slow-token-secret-0123456789',
  redirectUris: ['http://127.0.0.1/cb'],
  rotateRefreshTokens: true,
};
const POOL_SIZE = 10;
const ACCOUNTS = 12;
const STALL_MS = 4_000;

/** Refresh requests that reached the token endpoint. */
let tokenRequests = 0;
let stalling = false;
// The token endpoint of a slow service: a proxy in front of the real one holds every request
// for seconds before passing it on.
const slowToken = await startLocalServer(async (req, res) => {
  tokenRequests++;
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  if (stalling) await sleep(STALL_MS);
  const answer = await fetch(`${auth.issuer}/token`, {
    method: 'POST',
    headers: { 'content-type': String(req.headers['content-type']), accept: 'application/json' },
    body: Buffer.concat(chunks),
  });
  res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
  res.end(Buffer.from(await answer.arrayBuffer()));
});
const world = await startWorld({
  clients: { github: client },
  apis: true,
  env: { GITHUB_TOKEN_URL: `${slowToken.url}/token`, DATABASE_POOL_MAX: String(POOL_SIZE), CONNECTIONS_TOOL_TIMEOUT_MS: '20000' },
});
world.onStop(slowToken.close);
const { auth, stack } = world;

describe('token refresh and the connection pool', () => {
  it('finding 11: a token endpoint stalling for seconds under more concurrent refreshes than pool connections stalls no other tenant, and each account refreshes once', async () => {
    const users: TestUser[] = [];
    for (let i = 0; i < ACCOUNTS; i++) {
      const user = await createTestUser(stack);
      await connectGithubAccount(stack, auth, client.clientId, user, `slow-${i}`, { expired: true });
      users.push(user);
    }
    const bystander = await createTestUser(stack);
    const { pool, keyring, registry } = stack.services;
    const accounts = await Promise.all(
      users.map(async (u) => {
        const { rows } = await pool.query(`SELECT id, tenant_id FROM accounts WHERE owner_user_id = $1`, [u.user.id]);
        return { id: rows[0].id as string, tenantId: rows[0].tenant_id as string, integration: 'github' };
      }),
    );
    // Two more processes' credential stores (each with its own single-flight), on the same pool.
    const otherProcesses = [new CredentialStore(pool, keyring, registry), new CredentialStore(pool, keyring, registry)];

    stalling = true;
    const before = tokenRequests;
    const grantsBefore = auth.grants.refresh_token;
    const calls = users.flatMap((u) =>
      [0, 1].map(() => u.call('connections_execute', { name: 'github__get_authenticated_user', arguments: {} }).then((r) => r.body)),
    );
    const direct = otherProcesses.flatMap((store) => accounts.map((a) => store.refresh(a)));
    await expect.poll(() => tokenRequests - before, { timeout: 10_000 }).toBeGreaterThan(0);
    await sleep(500);

    // Meanwhile another tenant's plain queries on the same pool answer promptly: no connection is
    // held while the token endpoint stalls (before the fix, every one was, and these waited).
    const started = Date.now();
    const [query, ...plain] = await Promise.all([
      pool.query('SELECT 1 AS ok'),
      ...Array.from({ length: 2 * POOL_SIZE }, () => pool.query('SELECT pg_sleep(0.01)')),
    ]);
    const elapsed = Date.now() - started;
    expect(query.rows).toEqual([{ ok: 1 }]);
    expect(plain).toHaveLength(2 * POOL_SIZE);
    expect(elapsed, `other queries waited ${elapsed} ms behind the stalled refreshes`).toBeLessThan(1_000);
    expect(tokenRequests - before).toBeLessThanOrEqual(ACCOUNTS);
    // And another tenant's request is served.
    expect((await bystander.call('list_integrations', {})).status).toBe(200);

    const outcomes = await Promise.all(calls);
    expect(outcomes.filter((o) => !o.ok)).toEqual([]);
    const refreshed = await Promise.all(direct);
    expect(refreshed.every((r) => r.credential.accessToken)).toBe(true);
    // Exactly one refresh per account reached the token endpoint, across the three stores.
    expect(tokenRequests - before).toBe(ACCOUNTS);
    expect(auth.grants.refresh_token - grantsBefore).toBe(ACCOUNTS);
    stalling = false;
  }, 90_000);
});

describe('token refresh lease', () => {
  it('finding 11: when the lease lapses and is taken while the token endpoint is slow, the late answer (a rotated refresh token) is still stored and the account keeps working', async () => {
    const user = await createTestUser(stack);
    await connectGithubAccount(stack, auth, client.clientId, user, 'late-answer', { expired: true });
    const { pool, keyring, registry } = stack.services;
    const { rows } = await pool.query(`SELECT id, tenant_id, credential_version FROM accounts WHERE owner_user_id = $1`, [user.user.id]);
    const account = { id: rows[0].id as string, tenantId: rows[0].tenant_id as string, integration: 'github' };
    const versionBefore = rows[0].credential_version as number;
    const holder = new CredentialStore(pool, keyring, registry);

    stalling = true;
    const before = tokenRequests;
    const late = holder.refresh(account);
    late.catch(() => {});
    await expect.poll(() => tokenRequests - before, { timeout: 10_000 }).toBe(1);
    // While the token endpoint stalls, the holder's lease lapses and another process takes it
    // (it has not spent anything yet).
    await pool.query(
      `UPDATE accounts SET refresh_lease_id = 'another-process', refresh_lease_until = now() + interval '30 seconds' WHERE id = $1`,
      [account.id],
    );
    const refreshed = await late;
    stalling = false;
    expect(refreshed.version).toBe(versionBefore + 1);
    const { rows: after } = await pool.query(`SELECT credential_version, status FROM accounts WHERE id = $1`, [account.id]);
    expect(after[0]).toMatchObject({ credential_version: versionBefore + 1, status: 'active' });
    // The rotated refresh token was kept: the next refresh spends it and succeeds.
    await pool.query(`UPDATE accounts SET refresh_lease_id = NULL, refresh_lease_until = NULL WHERE id = $1`, [account.id]);
    const next = await new CredentialStore(pool, keyring, registry).refresh(account, versionBefore + 1);
    expect(next.version).toBe(versionBefore + 2);
    expect(next.credential.refreshToken).not.toBe(refreshed.credential.refreshToken);
  }, 60_000);
});
