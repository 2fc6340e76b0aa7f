import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../core/config.js';
import { KNOWN_PLACEHOLDER_SECRETS } from '../../core/secret-checks.js';
import { CONNECTION_TOOL_NAMES, createSwitchboard, type SwitchboardOptions } from '../../library.js';
import { createLogger } from '../../platform/telemetry/logger.js';
import { createTestUser, LogCapture, startWorld, TEST_KEY } from '../support/harness.js';

const { stack } = await startWorld();

describe('the library entry', () => {
  it('registers the two agent tools only when asked, with storage and a key', async () => {
    expect(CONNECTION_TOOL_NAMES).toEqual(['connections_search', 'connections_execute']);
    const logs = new LogCapture();
    const logger = createLogger({ level: 'info', destination: logs });
    const temporal = { client: stack.services.temporal };

    const noStorage = await createSwitchboard({ temporal, tools: true, encryptionKeys: TEST_KEY, logger });
    expect(noStorage.agentTools).toEqual([]);
    expect(logs.text()).toContain('agent tools not registered: no storage was configured');

    const storage = { databaseUrl: stack.env.DATABASE_URL, schema: stack.schema };
    const noKey = await createSwitchboard({ temporal, tools: true, storage, logger });
    expect(noKey.agentTools).toEqual([]);
    expect(logs.text()).toContain('agent tools not registered: no encryption key was configured');

    const optedOut = await createSwitchboard({
      temporal,
      storage,
      encryptionKeys: TEST_KEY,
      signingSecret: randomBytes(32).toString('hex'),
      logger,
    });
    expect(optedOut.agentTools).toEqual([]);
    await optedOut.close();

    const sb = await createSwitchboard({
      temporal: { client: stack.services.temporal, taskQueue: stack.env.TEMPORAL_TASK_QUEUE },
      tools: true,
      storage,
      encryptionKeys: TEST_KEY,
      signingSecret: randomBytes(32).toString('hex'),
      logger,
    });
    try {
      expect(sb.agentTools.map((t) => t.name)).toEqual(['connections_search', 'connections_execute']);
      expect(sb.agentTools[0].inputSchema).toMatchObject({ type: 'object', properties: { query: expect.any(Object) } });
      const user = await createTestUser(stack);
      const caller = { tenantId: user.user.tenantId, userId: user.user.id, roles: user.user.roles };
      const search = (await sb.agentTools[0].execute({ query: 'list repos' }, caller)) as { ok: boolean; results: { name: string }[] };
      expect(search.ok).toBe(true);
      expect(search.results[0].name).toBe('github__list_repos');
      // Identity comes from the run's context: the model's arguments cannot name another user.
      const run = await sb.agentTools[1].execute({ name: 'github__list_repos', arguments: {} }, caller);
      expect(run).toMatchObject({ ok: false, error: { code: 'not_connected' } });
      const bad = await sb.agentTools[1].execute({ name: 'github__list_repos', userId: 'someone-else' }, caller);
      expect(bad).toMatchObject({ ok: false, error: { code: 'invalid_arguments' } });
    } finally {
      await sb.close();
    }
  });
});

describe('finding 15: the library never signs with an empty or fixed key', () => {
  const temporal = () => ({ client: stack.services.temporal });
  const storage = () => ({ databaseUrl: stack.env.DATABASE_URL, schema: stack.schema });
  const configErrorOf = async (options: Partial<SwitchboardOptions>) => {
    const err = await createSwitchboard({ temporal: temporal(), storage: storage(), encryptionKeys: TEST_KEY, ...options }).then(
      () => undefined,
      (e) => e,
    );
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  };
  /** A portal session token as one signed with `secret` would be (HS256). */
  const forgedSession = (secret: string) => {
    const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const body = `${part({ alg: 'HS256' })}.${part({ u: 'user_x', t: 'ten_x', aud: 'switchboard:portal-session', exp: 9999999999 })}`;
    return `${body}.${createHmac('sha256', secret).update(body).digest('base64url')}`;
  };

  it('finding 15: an embedder passing an empty or short signingSecret gets a ConfigError naming PORTAL_SIGNING_SECRET', async () => {
    expect(await configErrorOf({ signingSecret: '' })).toEqual([{ variable: 'PORTAL_SIGNING_SECRET', message: expect.any(String) }]);
    expect((await configErrorOf({ signingSecret: 'short' }))[0].variable).toBe('PORTAL_SIGNING_SECRET');
  });

  it('finding 15: in production the library refuses to start without a real signing secret', async () => {
    const missing = await configErrorOf({ env: { NODE_ENV: 'production' } });
    expect(missing.map((p) => p.variable)).toEqual(['PORTAL_SIGNING_SECRET']);
    const placeholder = await configErrorOf({ env: { NODE_ENV: 'production' }, signingSecret: KNOWN_PLACEHOLDER_SECRETS[0] });
    expect(placeholder).toEqual([{ variable: 'PORTAL_SIGNING_SECRET', message: expect.stringContaining('placeholder') }]);
  });

  it('finding 15: without a secret in development each instance makes its own; a token signed with an empty key is refused', async () => {
    const logs = new LogCapture();
    const logger = createLogger({ level: 'info', destination: logs });
    const one = await createSwitchboard({ temporal: temporal(), storage: storage(), encryptionKeys: TEST_KEY, logger });
    const two = await createSwitchboard({ temporal: temporal(), storage: storage(), encryptionKeys: TEST_KEY, logger });
    try {
      expect(logs.text()).toContain('no signingSecret given: generated one for this process');
      const signer = one.context!.signer;
      const token = await signer.sign('portal-session', { u: 'user_x', t: 'ten_x' }, 60);
      expect(await signer.verify('portal-session', token)).toMatchObject({ u: 'user_x' });
      expect(await two.context!.signer.verify('portal-session', token)).toBeUndefined();
      expect(await signer.verify('portal-session', forgedSession(''))).toBeUndefined();
      expect(one.context!.signer.mac('portal-csrf', 's')).not.toBe(two.context!.signer.mac('portal-csrf', 's'));
    } finally {
      await one.close();
      await two.close();
    }
  });
});
