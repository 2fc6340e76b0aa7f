import { describe, expect, it } from 'vitest';
import { insertAccount } from '../../features/accounts/store/accounts.js';
import { startWorld, type TestUser } from '../support/harness.js';

const world = await startWorld({ env: { GITHUB_CLIENT_ID: 'id', GITHUB_CLIENT_SECRET: 'secret-isolation-0123' } });
const { stack } = world;
const owner = await world.user();
const otherTenant = await world.user();
const sameTenant = await world.user({ tenantId: owner.user.tenantId });
const account = await insertAccount(stack.services.pool, stack.services.keyring, {
  tenantId: owner.user.tenantId,
  ownerUserId: owner.user.id,
  integration: 'github',
  label: 'owners-account',
  credential: { type: 'oauth2', accessToken: 'owner-token-isolation' },
});
const accountId = account.id;
const connectionId = (await owner.call('connect', { integration: 'github' })).body.connectionId;

/** Calls `tool` with another user's id and with an id that never existed: the answers must match. */
async function sameAsUnknown(intruder: TestUser, tool: string, args: (id: string) => Record<string, unknown>, realId: string) {
  const unknownId = realId.replace(/.$/, (c) => (c === 'x' ? 'y' : 'x'));
  const real = await intruder.call(tool, args(realId));
  const unknown = await intruder.call(tool, args(unknownId));
  const normalise = (body: unknown) => JSON.stringify(body).split(realId).join('<id>').split(unknownId).join('<id>');
  expect(real.status, `${tool} status`).toBe(unknown.status);
  expect(normalise(real.body), tool).toBe(normalise(unknown.body));
  return real;
}

describe.each([
  ['another tenant', () => otherTenant],
  ['another user of the same tenant', () => sameTenant],
])("every meta-tool called with %s's ids answers as if they did not exist", (_who, intruder) => {
  it('wait_for_connection', async () => {
    const res = await sameAsUnknown(intruder(), 'wait_for_connection', (id) => ({ connectionId: id, timeoutSec: 1 }), connectionId);
    expect(res.body).toEqual({ error: 'Unknown connectionId' });
  });

  it('disconnect', async () => {
    const res = await sameAsUnknown(intruder(), 'disconnect', (id) => ({ account: id }), accountId);
    expect(res.status).toBe(404);
  });

  it('connections_execute and execute_tools with the account', async () => {
    const res = await sameAsUnknown(
      intruder(),
      'connections_execute',
      (id) => ({ name: 'github__get_authenticated_user', account: id }),
      accountId,
    );
    expect(res.body).toMatchObject({ ok: false, error: { code: 'not_connected' } });
    const viaConnection = await sameAsUnknown(
      intruder(),
      'connections_execute',
      (id) => ({ name: 'github__get_authenticated_user', account: id }),
      connectionId,
    );
    expect(viaConnection.body.error.code).toBe('not_connected');
    const meta = await sameAsUnknown(
      intruder(),
      'execute_tools',
      (id) => ({ executions: [{ tool: 'github_list_repos', account: id }] }),
      accountId,
    );
    expect(meta.body.results[0].error).toBe('NOT_CONNECTED');
  });

  it('list_connections, list_integrations and connections_search show nothing of it', async () => {
    expect((await intruder().call('list_connections', {})).body.connections).toEqual([]);
    const github = (await intruder().call('list_integrations')).body.integrations.find((i: { name: string }) => i.name === 'github');
    expect(github.connected).toBe(false);
    const hit = (await intruder().call('connections_search', { query: 'list repos' })).body.results[0];
    expect(hit.accounts).toEqual([]);
  });
});

describe('redirects', () => {
  it('never sends a signed-in human anywhere but this server', async () => {
    for (const next of ['https://evil.example/', '//evil.example/x', '/\\evil.example', 'javascript:alert(1)']) {
      const form = new URLSearchParams({ token: await owner.loginLink().then((l) => new URL(l).searchParams.get('token')!), next });
      const res = await fetch(`${stack.baseUrl}/portal/login-link`, { method: 'POST', body: form, redirect: 'manual' });
      expect(res.status, next).toBe(303);
      expect(res.headers.get('location'), next).toBe('/portal');
    }
  });
});
