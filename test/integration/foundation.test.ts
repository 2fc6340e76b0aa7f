import { randomBytes } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { connectionWorkflowId } from '../../core/ids.js';
import { insertAccount, readCredential, resealCredentials } from '../../features/accounts/store/accounts.js';
import { createAttempt, getAttempt } from '../../features/connections/store/connection-attempts.js';
import { connectionResolvedSignal, connectionWorkflow } from '../../features/connections/workflow.js';
import { createPool, migrate } from '../../platform/database/database.js';
import { Keyring } from '../../platform/database/keyring.js';
import { createTestUser, startStack, startWorld } from '../support/harness.js';

const { stack } = await startWorld();

describe('migrations', () => {
  it('apply once and are a no-op the second time', async () => {
    const schema = `m_${randomBytes(5).toString('hex')}`;
    const url = inject('testDatabaseUrl');
    const first = await migrate({ url, schema });
    expect(first.length).toBeGreaterThan(0);
    expect(await migrate({ url, schema })).toEqual([]);
    const pool = createPool({ url, schema });
    const { rows } = await pool.query(`SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1`, [schema]);
    expect(rows.map((r) => r.table_name)).toEqual(
      expect.arrayContaining(['accounts', 'api_keys', 'audit_log', 'connection_attempts', 'tenants', 'users']),
    );
    await pool.query(`DROP SCHEMA ${schema} CASCADE`);
    await pool.end();
  });
});

describe('secrets at rest', () => {
  it('stores credentials sealed and re-seals them under a rotated key', async () => {
    const { pool, keyring } = stack.services;
    const alice = await createTestUser(stack);
    const account = await insertAccount(pool, keyring, {
      tenantId: alice.user.tenantId,
      ownerUserId: alice.user.id,
      integration: 'github',
      label: 'alice',
      credential: { type: 'oauth2', accessToken: 'gho_plaintext_marker', refreshToken: 'ghr_plaintext_marker' },
    });
    const raw = await pool.query('SELECT credential_sealed, credential_key_id FROM accounts WHERE id = $1', [account.id]);
    expect(raw.rows[0].credential_sealed).not.toContain('plaintext_marker');
    expect(raw.rows[0].credential_key_id).toBe(keyring.activeKeyId);

    const rotated = new Keyring(new Map([...stack.services.config.ENCRYPTION_KEYS!, ['test2', randomBytes(32)]]), 'test2');
    expect(await resealCredentials(pool, rotated)).toBeGreaterThanOrEqual(1);
    const after = await pool.query('SELECT credential_key_id FROM accounts WHERE id = $1', [account.id]);
    expect(after.rows[0].credential_key_id).toBe('test2');
    expect((await readCredential(pool, rotated, alice.user.tenantId, account.id))?.accessToken).toBe('gho_plaintext_marker');
  });
});

describe('accounts', () => {
  it('concurrent first connections of one owner: all stored, exactly one default', async () => {
    const { pool, keyring } = stack.services;
    const carol = await createTestUser(stack);
    const stored = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        insertAccount(pool, keyring, { tenantId: carol.user.tenantId, ownerUserId: carol.user.id, integration: 'slack', label: `ws-${i}` }),
      ),
    );
    expect(stored).toHaveLength(8);
    expect(stored.filter((a) => a.isDefault)).toHaveLength(1);
  });
});

describe('the Temporal plugin', () => {
  it('runs a Switchboard workflow on a real worker, with its activities', async () => {
    const { pool, temporal, config } = stack.services;
    const bob = await createTestUser(stack);
    const openAttempt = async () => {
      const made = await createAttempt(
        pool,
        { tenantId: bob.user.tenantId, userId: bob.user.id, integration: 'github', authMode: 'oauth2', ttlSec: 60 },
        20,
      );
      if ('full' in made) throw new Error('bob has no open attempts: there is room');
      return made.attempt;
    };
    const attempt = await openAttempt();
    const handle = await temporal.workflow.start(connectionWorkflow, {
      workflowId: connectionWorkflowId(attempt.id),
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      args: [{ attemptId: attempt.id, tenantId: bob.user.tenantId, userId: bob.user.id, integration: 'github', ttlSec: 1 }],
    });
    // A TTL of 1 s with no callback: the workflow's activity expires the attempt in Postgres.
    expect(await handle.result()).toEqual({ status: 'EXPIRED' });
    expect((await getAttempt(pool, attempt.id))?.status).toBe('EXPIRED');

    const attempt2 = await openAttempt();
    const handle2 = await temporal.workflow.start(connectionWorkflow, {
      workflowId: connectionWorkflowId(attempt2.id),
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      args: [{ attemptId: attempt2.id, tenantId: bob.user.tenantId, userId: bob.user.id, integration: 'github', ttlSec: 60 }],
    });
    await handle2.signal(connectionResolvedSignal, { status: 'CONNECTED', accountId: 'acc_x' });
    expect(await handle2.result()).toEqual({ status: 'CONNECTED', accountId: 'acc_x' });
  });
});

describe('health', () => {
  it('/healthz answers while the process lives and /readyz checks Temporal and Postgres', async () => {
    expect((await fetch(`${stack.baseUrl}/healthz`)).status).toBe(200);
    const ready = await fetch(`${stack.baseUrl}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ ok: true, temporal: 'up', postgres: 'up' });
  });

  it('/readyz answers 503 naming Temporal when it is down', async () => {
    const down = await startStack({ worker: false, env: {} });
    try {
      await down.services.connection.close();
      const res = await fetch(`${down.baseUrl}/readyz`);
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({ ok: false, temporal: 'down', postgres: 'up' });
    } finally {
      await down.http.close();
      await down.services.pool.query(`DROP SCHEMA IF EXISTS ${down.schema} CASCADE`);
      await down.services.pool.end();
    }
  });
});
