import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONNECTION_TOOL_NAMES, createSwitchboard } from '../../library.js';
import { createLogger } from '../../server/logger.js';
import { createTestUser, LogCapture, type Stack, startStack, TEST_KEY } from '../support/harness.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
}, 120_000);
afterAll(() => stack?.close());

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
