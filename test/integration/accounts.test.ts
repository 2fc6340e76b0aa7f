import { describe, expect, it } from 'vitest';
import { listUsableAccounts, listUsableAccountsWithSealedCredentials } from '../../features/accounts/store/accounts.js';
import { CredentialStore } from '../../features/connections/credentials.js';
import { createTestUser, startWorld, type TestUser } from '../support/harness.js';

const world = await startWorld({ clients: { github: {}, portal: {} } });
const { auth, stack } = world;
const { baseUrl } = stack;
await world.user({ email: 'alice-oidc@example.com' });
const browser = await world.browser();

const connect = (user: TestUser, login: string, options: { tenantScoped?: boolean; sharingRoles?: string[] } = {}) =>
  world.connectGithub(user, login, options);

describe('list_connections', () => {
  it("lists the caller's own accounts first, then the organisation's shared with one of their roles", async () => {
    const admin = await createTestUser(stack, { roles: ['admin'] });
    const eng = await createTestUser(stack, { tenantId: admin.user.tenantId, roles: ['eng'] });
    await connect(admin, 'org-shared', { tenantScoped: true, sharingRoles: ['eng'] });
    await connect(admin, 'org-private', { tenantScoped: true, sharingRoles: ['finance'] });
    await connect(eng, 'eng-own');
    const { body } = await eng.call('list_connections', {});
    expect(body.connections).toEqual([
      { id: expect.any(String), integration: 'github', label: 'eng-own', scope: 'user', default: true, status: 'active' },
      { id: expect.any(String), integration: 'github', label: 'org-shared', scope: 'tenant', default: true, status: 'active' },
    ]);
    expect((await eng.call('list_connections', { integration: 'slack' })).body.connections).toEqual([]);
  });
});

describe("a tool call's account listing with sealed credentials", () => {
  it("holds exactly the caller's usable accounts, and each sealed credential opens only as its own account's", async () => {
    const { pool, keyring, registry } = stack.services;
    const admin = await createTestUser(stack, { roles: ['admin'] });
    const eng = await createTestUser(stack, { tenantId: admin.user.tenantId, roles: ['eng'] });
    const colleague = await createTestUser(stack, { tenantId: admin.user.tenantId, roles: ['eng'] });
    const outsider = await createTestUser(stack, { roles: ['eng'] });
    await connect(admin, 'sealed-org-shared', { tenantScoped: true, sharingRoles: ['eng'] });
    await connect(admin, 'sealed-org-finance', { tenantScoped: true, sharingRoles: ['finance'] });
    await connect(eng, 'sealed-eng-own');
    await connect(colleague, 'sealed-colleague-own');
    await connect(outsider, 'sealed-outsider-own');
    const caller = { tenantId: eng.user.tenantId, userId: eng.user.id, roles: ['eng'] };

    const { accounts, sealed } = await listUsableAccountsWithSealedCredentials(pool, caller, 'github');
    // The same accounts, in the same order, as the listing without credentials.
    expect(accounts).toEqual(await listUsableAccounts(pool, caller, 'github'));
    expect(accounts.map((a) => a.label)).toEqual(['sealed-eng-own', 'sealed-org-shared']);
    expect([...sealed.keys()].sort()).toEqual(accounts.map((a) => a.id).sort());

    const credentials = new CredentialStore(pool, keyring, registry);
    for (const account of accounts) {
      const row = sealed.get(account.id)!;
      const fromListing = await credentials.load(account, row);
      expect(fromListing).toEqual(await credentials.load(account));
      const token = fromListing?.credential.accessToken;
      expect(token).toEqual(expect.any(String));
      // Sealed as read: the token is not in the row's text.
      expect(row.credential_sealed).not.toContain(token);
    }
    // A sealed credential is bound to its account: opened as another account's, it does not open.
    const [own, shared] = accounts;
    await expect(credentials.load(own, sealed.get(shared.id))).rejects.toThrow();
  });
});

describe('disconnect', () => {
  it('deletes the credential and revokes it at the service', async () => {
    const bob = await createTestUser(stack);
    const { tokens } = await connect(bob, 'bob-gh');
    const { status, body } = await bob.call('disconnect', { integration: 'github' });
    expect(status).toBe(200);
    expect(body).toEqual({ disconnected: true, integration: 'github', account: expect.any(String), revoked: true });
    expect(await auth.provider.RefreshToken.find(tokens.refreshToken)).toBeUndefined();
    expect((await bob.call('list_connections', {})).body.connections).toEqual([]);
    expect((await bob.call('list_integrations')).body.integrations[0]).toEqual({ name: 'github', version: '1.0.0', connected: false });
    expect(await bob.call('disconnect', { integration: 'github' })).toEqual({
      status: 404,
      body: { error: 'No connected account matches github' },
    });
  });

  it("picks the account by label or id, and never touches organisation or other users' accounts", async () => {
    const carol = await createTestUser(stack);
    await connect(carol, 'carol-work');
    const home = await connect(carol, 'carol-home');
    const org = await connect(carol, 'org-acc', { tenantScoped: true, sharingRoles: ['member'] });
    const dan = await createTestUser(stack, { tenantId: carol.user.tenantId });
    expect((await dan.call('disconnect', { account: home.account.id })).status).toBe(404);
    expect((await carol.call('disconnect', { account: org.account.id })).status).toBe(404);
    expect((await carol.call('disconnect', { account: 'carol-home' })).body).toMatchObject({
      disconnected: true,
      account: home.account.id,
    });
    const labels = (await carol.call('list_connections', {})).body.connections.map((c: { label: string }) => c.label);
    expect(labels).toEqual(['carol-work', 'org-acc']);
    expect((await carol.call('disconnect', {})).body.error).toMatch(/give integration, account, or both/);
  });
});

describe('portal sign-in through OIDC', () => {
  it('signs a human in through the identity provider and matches them by email', async () => {
    const page = await (await browser.newContext()).newPage();
    await page.goto(`${baseUrl}/portal`);
    await page.waitForURL((url) => url.href.startsWith(auth.issuer));
    await page.locator('input[name="login"]').fill('alice-oidc@example.com');
    await page.locator('input[name="password"]').fill('x');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();
    await page
      .waitForURL((url) => url.pathname === '/portal', { timeout: 5000 })
      .catch(async () => {
        throw new Error(`stuck at ${page.url()}: ${await page.content()}`);
      });
    expect(await page.getByTestId('signed-in-as').textContent()).toBe('alice-oidc@example.com');
    await page.context().close();
  });

  it('refuses a human whose email no Switchboard user has', async () => {
    const page = await (await browser.newContext()).newPage();
    await page.goto(`${baseUrl}/portal/login`);
    await page.locator('input[name="login"]').fill('stranger@example.com');
    await page.locator('input[name="password"]').fill('x');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL((url) => url.pathname === '/portal/oidc/callback');
    expect(await page.locator('h1').textContent()).toBe('No account');
    await page.context().close();
  });
});
