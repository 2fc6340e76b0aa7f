import { randomBytes } from 'node:crypto';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { type Account, getAccount, insertAccount, readCredential } from '../../features/accounts/store/accounts.js';
import { consentAs, signedInPage as signedInPageAs } from '../support/consent.js';
import { startWorld, type TestUser } from '../support/harness.js';

/**
 * The portal in a real chromium against the whole stack: the API-key form for Linear (tested
 * against the fake Linear before anything is saved), the integrations page's Connect buttons
 * through a real consent page, account management, organisation accounts and their sharing,
 * CSRF and the Content-Security-Policy.
 */

const github = { clientId: 'gh-portal', clientSecret: 'gh-portal-secret-0123456789' };

const key = () => `lin_api_${randomBytes(20).toString('hex')}`;
const ALICE_KEY = key();
const ALICE_SECOND_KEY = key();
const ORG_KEY = key();
const WRONG_KEY = key();
/** The operator's cap on a service's answer, far below the 10 MiB default. */
const RESPONSE_CAP = 64 * 1024;

const world = await startWorld({
  clients: { github },
  apis: true,
  env: { CONNECTIONS_PROVIDER_RESPONSE_MAX_BYTES: String(RESPONSE_CAP) },
});
const { auth, apis, stack } = world;
/** A member of tenant acme. */
const alice = await world.user({ email: 'alice@acme.example' });
const tenantId = alice.user.tenantId;
/** Acme's administrator. */
const olga = await world.user({ tenantId, email: 'olga@acme.example', roles: ['member', 'admin'] });
/** Acme members with and without the role `eng`. */
const eve = await world.user({ tenantId, email: 'eve@acme.example', roles: ['member', 'eng'] });
const mo = await world.user({ tenantId, email: 'mo@acme.example', roles: ['member'] });
const linear = apis.state.linear;
linear.grantKey(ALICE_KEY, { name: 'Alice Example', email: 'alice@linear.example' });
linear.grantKey(ALICE_SECOND_KEY, { name: 'Alice Bot', email: 'alice-bot@linear.example' });
linear.grantKey(ORG_KEY, { name: 'Acme Robot', email: 'robot@linear.example' });
const browser = await world.browser();

const pool = () => stack.services.pool;
const signedInPage = (user: TestUser) => signedInPageAs(browser, user);

async function accountsOf(user: TestUser, integration: string): Promise<Account[]> {
  const { rows } = await pool().query('SELECT id FROM accounts WHERE owner_user_id = $1 AND integration = $2 ORDER BY created_at', [
    user.user.id,
    integration,
  ]);
  return Promise.all(rows.map(async (r) => (await getAccount(pool(), user.user.tenantId, r.id))!));
}

const orgAccounts = async (integration: string): Promise<Account[]> => {
  const { rows } = await pool().query(`SELECT id FROM accounts WHERE tenant_id = $1 AND scope = 'tenant' AND integration = $2`, [
    alice.user.tenantId,
    integration,
  ]);
  return Promise.all(rows.map(async (r) => (await getAccount(pool(), alice.user.tenantId, r.id))!));
};

/** Submits the Linear form with `apiKey`; answers the form POST's response. */
async function submitKey(page: Page, apiKey: string) {
  await page.getByLabel('Personal API key').fill(apiKey);
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/portal/integrations/linear'),
    page.getByRole('button', { name: 'Test and save' }).click(),
  ]);
  await page.waitForLoadState();
  return response;
}

const csrfOf = (page: Page) => page.locator('input[name="_csrf"]').first().inputValue();

/** A form POST from inside the signed-in browser context (its cookies), without following redirects. */
const postForm = (page: Page, path: string, form: Record<string, string>) =>
  page.request.post(`${stack.baseUrl}${path}`, { form, maxRedirects: 0 });

describe('connect on an API-key integration', () => {
  it('answers the portal URL, and list_integrations shows linear not connected', async () => {
    const { status, body } = await alice.call('connect', { integration: 'linear' });
    expect(status).toBe(400);
    expect(body.error).toBe(
      `linear is connected with an API key in the portal, not through connect(). Send the user to ${stack.baseUrl}/portal/integrations/linear`,
    );
    const integrations = (await alice.call('list_integrations')).body.integrations;
    expect(integrations.find((i: { name: string }) => i.name === 'linear')).toEqual({ name: 'linear', version: '1.0.0', connected: false });
  });
});

describe('the API-key form', () => {
  it('is rendered from the manifest: a password input with its label and placeholder, and a CSRF token', async () => {
    const page = await signedInPage(alice);
    const response = await page.goto(`${stack.baseUrl}/portal/integrations/linear`);
    expect(response?.status()).toBe(200);
    expect(await page.locator('h1').textContent()).toContain('Linear');
    const input = page.getByLabel('Personal API key');
    expect(await input.getAttribute('type')).toBe('password');
    expect(await input.getAttribute('placeholder')).toBe('lin_api_…');
    expect(await input.getAttribute('name')).toBe('field_apiKey');
    expect((await csrfOf(page)).length).toBeGreaterThan(20);
    await page.screenshot({ path: '/tmp/portal-apikey-form.png', fullPage: true });
    await page.context().close();
  });

  it('a signed-out visitor is sent to sign in and back', async () => {
    const page = await (await browser.newContext()).newPage();
    await page.goto(`${stack.baseUrl}/portal/integrations/linear`);
    const url = new URL(page.url());
    expect(url.pathname).toBe('/portal/login');
    expect(url.searchParams.get('next')).toBe('/portal/integrations/linear');
    await page.context().close();
  });

  it('a key the service refuses: "refused this key", status 400, nothing saved, the key not echoed', async () => {
    const page = await signedInPage(alice);
    await page.goto(`${stack.baseUrl}/portal/integrations/linear`);
    const callsBefore = apis.state.linear.calls.length;
    const response = await submitKey(page, WRONG_KEY);
    expect(response.status()).toBe(400);
    expect(await page.getByRole('alert').textContent()).toContain('Linear refused this key (HTTP 401)');
    expect(await page.content()).not.toContain(WRONG_KEY);
    // Exactly one test call reached Linear, and it was refused.
    expect(apis.state.linear.calls.slice(callsBefore)).toEqual([{ field: '', accepted: false }]);
    expect(await accountsOf(alice, 'linear')).toEqual([]);
    expect(stack.logs.text()).not.toContain(WRONG_KEY);
    await page.context().close();
  });

  it("finding 16: the test call of a key stops reading an endless answer at the operator's cap; nothing saved", async () => {
    const page = await signedInPage(alice);
    await page.goto(`${stack.baseUrl}/portal/integrations/linear`);
    apis.behave.set('/linear/graphql', { endless: true, times: 1 });
    const abandoned = apis.abandoned;
    const response = await submitKey(page, ALICE_KEY);
    expect(response.status()).toBe(502);
    // The operator's cap (not the 10 MiB default) stopped the read, and Switchboard hung up.
    expect(await page.getByRole('alert').textContent()).toContain(
      `Linear answered more than ${RESPONSE_CAP} bytes when Switchboard tested the key`,
    );
    await expect.poll(() => apis.abandoned).toBe(abandoned + 1);
    expect(await accountsOf(alice, 'linear')).toEqual([]);
    await page.context().close();
  });

  it('refuses an empty or over-long key without calling the service', async () => {
    const page = await signedInPage(alice);
    await page.goto(`${stack.baseUrl}/portal/integrations/linear`);
    const _csrf = await csrfOf(page);
    const _form = await page.locator('input[name="_form"]').inputValue();
    const callsBefore = apis.state.linear.calls.length;
    const empty = await postForm(page, '/portal/integrations/linear', { _csrf, _form, field_apiKey: '   ' });
    expect(empty.status()).toBe(400);
    expect(await empty.text()).toContain('Personal API key is required.');
    const long = await postForm(page, '/portal/integrations/linear', { _csrf, _form, field_apiKey: `lin_api_${'x'.repeat(1000)}` });
    expect(long.status()).toBe(400);
    expect(await long.text()).toContain('Personal API key is longer than 1000 characters.');
    expect(apis.state.linear.calls.length).toBe(callsBefore);
    expect(await accountsOf(alice, 'linear')).toEqual([]);
    await page.context().close();
  });

  it('a good key is tested once, saved sealed and labelled by identify; linear tools then work', async () => {
    const page = await signedInPage(alice);
    await page.goto(`${stack.baseUrl}/portal/integrations/linear`);
    const callsBefore = apis.state.linear.calls.length;
    const response = await submitKey(page, ALICE_KEY);
    expect(response.status()).toBe(200);
    expect(await page.locator('h1').textContent()).toBe('Linear is connected');
    expect(await page.getByRole('status').textContent()).toContain('alice@linear.example');
    expect(apis.state.linear.calls.slice(callsBefore)).toEqual([{ field: 'viewer', accepted: true }]);

    const [account] = await accountsOf(alice, 'linear');
    expect(account).toMatchObject({ scope: 'user', label: 'alice@linear.example', isDefault: true, status: 'active', hasCredential: true });
    // The raw row holds the key only sealed.
    const { rows } = await pool().query('SELECT row_to_json(a)::text AS raw, external_id FROM accounts a WHERE id = $1', [account.id]);
    expect(rows[0].raw).not.toContain(ALICE_KEY);
    expect(rows[0].raw).not.toContain(ALICE_KEY.slice(8, 30));
    expect(rows[0].external_id).toBe(apis.state.linear.keys.get(ALICE_KEY));
    const credential = await readCredential(pool(), stack.services.keyring, alice.user.tenantId, account.id);
    expect(credential).toEqual({ type: 'apikey', fields: { apiKey: ALICE_KEY } });

    expect((await alice.call('list_integrations')).body.integrations.find((i: { name: string }) => i.name === 'linear').connected).toBe(
      true,
    );
    const teams = await alice.call('connections_execute', { name: 'linear__list_teams', arguments: {} });
    expect(teams.status).toBe(200);
    expect(teams.body.ok).toBe(true);
    expect(teams.body.result.teams.map((t: { key: string }) => t.key)).toEqual(['ENG', 'OPS']);
    const eng = teams.body.result.teams[0];
    expect(eng.states.map((s: { name: string }) => s.name)).toEqual(['Backlog', 'Todo', 'In Progress', 'Done', 'Canceled']);
    expect(teams.body.result.nextCursor).toBeNull();
    expect(stack.logs.text()).not.toContain(ALICE_KEY);
    await page.context().close();
  });

  it('the other Linear tools speak the GraphQL shapes the service accepts', async () => {
    const run = async (tool: string, args: Record<string, unknown>) => {
      const { body } = await alice.call('connections_execute', { name: `linear__${tool}`, arguments: args });
      expect(body, tool).toMatchObject({ ok: true });
      return body.result;
    };
    const { teams } = await run('list_teams', { first: 1 });
    const eng = teams[0];
    const created = await run('create_issue', {
      teamId: eng.id,
      title: 'Portal test issue',
      description: 'From **Switchboard**',
      priority: 3,
    });
    expect(created).toMatchObject({ identifier: 'ENG-3', title: 'Portal test issue', state: 'Todo', priorityLabel: 'Medium', team: 'ENG' });
    const done = eng.states.find((s: { type: string }) => s.type === 'completed');
    const updated = await run('update_issue', { id: created.identifier, stateId: done.id, labelIds: [eng.labels[0].id] });
    expect(updated).toMatchObject({ identifier: 'ENG-3', state: 'Done', stateType: 'completed', labels: ['Bug'] });
    const completed = await run('list_issues', { teamKey: 'ENG', stateType: 'completed' });
    expect(completed.issues.map((i: { identifier: string }) => i.identifier)).toEqual(['ENG-3']);
    const found = await run('search_issues', { query: 'login timeout' });
    expect(found).toMatchObject({ totalCount: 1, issues: [{ identifier: 'ENG-1', assignee: { name: 'Ada Lovelace' } }] });
    const missing = await alice.call('connections_execute', { name: 'linear__update_issue', arguments: { id: 'ENG-999', title: 'x' } });
    expect(missing.body).toMatchObject({ ok: false, error: { code: 'tool_failed' } });
    expect(missing.body.error.message).toContain('Entity not found: Issue');
  });
});

describe('the accounts page', () => {
  it('lists, renames (a <script> label stays inert), sets the default and disconnects', async () => {
    const [first] = await accountsOf(alice, 'linear');
    const second = await insertAccount(pool(), stack.services.keyring, {
      tenantId: alice.user.tenantId,
      ownerUserId: alice.user.id,
      integration: 'linear',
      label: 'second key',
      credential: { type: 'apikey', fields: { apiKey: ALICE_SECOND_KEY } },
    });
    const page = await signedInPage(alice);
    await page.goto(`${stack.baseUrl}/portal/accounts`);
    const rows = page.locator('tr[data-account]');
    expect(await rows.count()).toBe(2);
    const firstRow = page.locator(`tr[data-account="${first.id}"]`);
    const secondRow = page.locator(`tr[data-account="${second.id}"]`);
    expect(await firstRow.textContent()).toContain('Default');
    expect(await firstRow.textContent()).toContain('Yours');
    expect(await secondRow.textContent()).not.toContain('Default');

    // Rename to markup: stored verbatim, rendered escaped, nothing runs.
    const evil = `<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">`;
    await secondRow.getByRole('textbox').fill(evil);
    await secondRow.getByRole('button', { name: 'Rename' }).click();
    await page.waitForURL((url) => url.searchParams.get('done') === 'renamed');
    expect(await page.getByRole('status').textContent()).toContain('renamed');
    expect((await getAccount(pool(), alice.user.tenantId, second.id))?.label).toBe(evil);
    expect(await page.locator(`tr[data-account="${second.id}"]`).getByRole('textbox').inputValue()).toBe(evil);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await page.locator('main script, main img').count()).toBe(0);
    const raw = await (await page.request.get(`${stack.baseUrl}/portal/accounts`)).text();
    expect(raw).not.toContain('<script>window');
    expect(raw).not.toContain('<img src=x');
    expect(raw).toContain('&#60;script&#62;window.__pwned=1&#60;/script&#62;');
    expect(
      (await alice.call('list_connections', { integration: 'linear' })).body.connections.map((c: { label: string }) => c.label),
    ).toEqual(['alice@linear.example', evil]);
    await page.screenshot({ path: '/tmp/portal-accounts.png', fullPage: true });

    // Make the second the default: the first steps down.
    await page.locator(`tr[data-account="${second.id}"]`).getByRole('button', { name: 'Make default' }).click();
    await page.waitForURL((url) => url.searchParams.get('done') === 'default');
    expect((await getAccount(pool(), alice.user.tenantId, second.id))?.isDefault).toBe(true);
    expect((await getAccount(pool(), alice.user.tenantId, first.id))?.isDefault).toBe(false);
    expect(await page.locator(`tr[data-account="${second.id}"]`).textContent()).toContain('Default');
    const viaDefault = await alice.call('connections_execute', { name: 'linear__list_teams', arguments: {} });
    expect(viaDefault.body.ok).toBe(true);

    // Disconnect the first.
    await page.locator(`tr[data-account="${first.id}"]`).getByRole('button', { name: 'Disconnect' }).click();
    await page.waitForURL((url) => url.searchParams.get('done') === 'disconnected');
    expect(await getAccount(pool(), alice.user.tenantId, first.id)).toBeUndefined();
    expect(await page.locator('tr[data-account]').count()).toBe(1);
    await page.context().close();
  });

  it('disconnecting an OAuth account revokes it at the service, through the same code as the disconnect tool', async () => {
    const tokens = await auth.issueTokens('alice-gh', github.clientId);
    const account = await insertAccount(pool(), stack.services.keyring, {
      tenantId: alice.user.tenantId,
      ownerUserId: alice.user.id,
      integration: 'github',
      label: 'alice-gh',
      credential: { type: 'oauth2', accessToken: tokens.accessToken, refreshToken: tokens.refreshToken },
    });
    const page = await signedInPage(alice);
    await page.goto(`${stack.baseUrl}/portal/accounts`);
    await page.locator(`tr[data-account="${account.id}"]`).getByRole('button', { name: 'Disconnect' }).click();
    await page.waitForURL((url) => url.searchParams.get('done') === 'revoked');
    expect(await page.getByRole('status').textContent()).toContain('revoked');
    expect(await auth.provider.RefreshToken.find(tokens.refreshToken)).toBeUndefined();
    expect(await getAccount(pool(), alice.user.tenantId, account.id)).toBeUndefined();
    await page.context().close();
  });

  it('refuses an empty label and another user changing your account', async () => {
    const [account] = await accountsOf(alice, 'linear');
    const page = await signedInPage(alice);
    await page.goto(`${stack.baseUrl}/portal/accounts`);
    const empty = await postForm(page, `/portal/accounts/${account.id}/label`, { _csrf: await csrfOf(page), label: '  ' });
    expect(empty.status()).toBe(400);
    expect(await empty.text()).toContain('The label must not be empty.');

    const other = await signedInPage(mo);
    await other.goto(`${stack.baseUrl}/portal/integrations/linear`);
    const _csrf = await csrfOf(other);
    for (const what of ['label', 'default', 'disconnect']) {
      const res = await postForm(other, `/portal/accounts/${account.id}/${what}`, { _csrf, label: 'mine now' });
      expect(res.status(), what).toBe(404);
    }
    expect(await getAccount(pool(), alice.user.tenantId, account.id)).toMatchObject({ label: account.label, isDefault: true });
    await page.context().close();
    await other.context().close();
  });
});

describe('CSRF', () => {
  it('a POST without the token or with a wrong one is refused with 403 and changes nothing', async () => {
    const [account] = await accountsOf(alice, 'linear');
    const page = await signedInPage(alice);
    await page.goto(`${stack.baseUrl}/portal/accounts`);
    const stranger = await signedInPage(mo);
    await stranger.goto(`${stack.baseUrl}/portal/integrations/linear`);
    const strangersToken = await csrfOf(stranger);
    const callsBefore = apis.state.linear.calls.length;
    for (const token of [undefined, 'wrong', strangersToken, `${await csrfOf(page)}x`]) {
      const form = (extra: Record<string, string>) => (token === undefined ? extra : { _csrf: token, ...extra });
      const requests = [
        postForm(page, `/portal/accounts/${account.id}/label`, form({ label: 'changed' })),
        postForm(page, `/portal/accounts/${account.id}/default`, form({})),
        postForm(page, `/portal/accounts/${account.id}/disconnect`, form({})),
        postForm(page, `/portal/integrations/linear`, form({ field_apiKey: ALICE_SECOND_KEY })),
        postForm(page, `/portal/integrations/github/connect`, form({})),
      ];
      for (const res of await Promise.all(requests)) {
        expect(res.status(), `${res.url()} with ${token ?? 'no token'}`).toBe(403);
        expect(await res.text()).toContain('Request refused');
      }
    }
    expect(await getAccount(pool(), alice.user.tenantId, account.id)).toMatchObject({ label: account.label, isDefault: true });
    expect(await accountsOf(alice, 'linear')).toHaveLength(1);
    expect(apis.state.linear.calls.length).toBe(callsBefore);
    // A cross-site form (no portal token at all) is refused the same way.
    const forged = await fetch(`${stack.baseUrl}/portal/accounts/${account.id}/disconnect`, { method: 'POST', redirect: 'manual' });
    expect(forged.status).toBe(403);
    expect(await getAccount(pool(), alice.user.tenantId, account.id)).toBeDefined();
    await page.context().close();
    await stranger.context().close();
  });
});

describe('organisation accounts', () => {
  const linearAccounts = async (user: TestUser) => {
    const { body } = await user.call('connections_search', { query: 'linear teams', provider: 'linear' });
    expect(body.ok).toBe(true);
    return body.results.find((r: { name: string }) => r.name === 'linear__list_teams').accounts as { label: string; scope: string }[];
  };

  it('a member cannot add or share one', async () => {
    const page = await signedInPage(alice);
    const form = await page.goto(`${stack.baseUrl}/portal/integrations/linear?for=organisation`);
    expect(form?.status()).toBe(403);
    await page.goto(`${stack.baseUrl}/portal/integrations/linear`);
    const _csrf = await csrfOf(page);
    const post = await postForm(page, '/portal/integrations/linear', { _csrf, for: 'organisation', field_apiKey: ORG_KEY });
    expect(post.status()).toBe(403);
    const connect = await postForm(page, '/portal/integrations/github/connect', { _csrf, for: 'organisation' });
    expect(connect.status()).toBe(403);
    expect(await orgAccounts('linear')).toEqual([]);
    await page.goto(`${stack.baseUrl}/portal/accounts`);
    expect(await page.getByRole('heading', { name: 'Organisation accounts' }).count()).toBe(0);
    await page.context().close();
  });

  it('an admin adds one with the API-key form and shares it with a role: members of the role see and use it, others do not', async () => {
    const page = await signedInPage(olga);
    await page.goto(`${stack.baseUrl}/portal/integrations`);
    await page.locator('tr[data-integration="linear"]').getByRole('link', { name: 'Add organisation key' }).click();
    await page.waitForURL((url) => url.searchParams.get('for') === 'organisation');
    const response = await submitKey(page, ORG_KEY);
    expect(response.status()).toBe(200);
    expect(await page.getByRole('status').textContent()).toContain('shared with nobody yet');
    const [org] = await orgAccounts('linear');
    expect(org).toMatchObject({ scope: 'tenant', ownerUserId: null, label: 'robot@linear.example', sharingRoles: [], isDefault: true });
    expect(await accountsOf(olga, 'linear')).toEqual([]);

    // Shared with nobody: no member sees it.
    expect(await linearAccounts(eve)).toEqual([]);

    await page.goto(`${stack.baseUrl}/portal/accounts`);
    const row = page.locator(`tr[data-org-account="${org.id}"]`);
    await row.getByLabel('Roles that may use robot@linear.example').fill('eng');
    await row.getByRole('button', { name: 'Share' }).click();
    await page.waitForURL((url) => url.searchParams.get('done') === 'shared');
    expect((await getAccount(pool(), olga.user.tenantId, org.id))?.sharingRoles).toEqual(['eng']);
    await page.screenshot({ path: '/tmp/portal-accounts-admin.png', fullPage: true });

    // eve has the role: connections_search lists the account, and tools run on it.
    expect(await linearAccounts(eve)).toEqual([
      { id: org.id, label: 'robot@linear.example', scope: 'tenant', default: true, status: 'active' },
    ]);
    expect((await eve.call('list_connections', { integration: 'linear' })).body.connections).toEqual([
      expect.objectContaining({ id: org.id, scope: 'tenant' }),
    ]);
    const teams = await eve.call('connections_execute', { name: 'linear__list_teams', arguments: {} });
    expect(teams.body.ok).toBe(true);
    // eve's portal shows it, read-only.
    const evePage = await signedInPage(eve);
    await evePage.goto(`${stack.baseUrl}/portal/accounts`);
    const eveRow = evePage.locator(`tr[data-account="${org.id}"]`);
    expect(await eveRow.textContent()).toContain('Managed by an administrator');
    expect(await eveRow.getByRole('button').count()).toBe(0);
    await evePage.context().close();

    // mo lacks the role: not listed, not usable.
    expect(await linearAccounts(mo)).toEqual([]);
    expect((await mo.call('list_connections', { integration: 'linear' })).body.connections).toEqual([]);
    const refused = await mo.call('connections_execute', { name: 'linear__list_teams', arguments: {} });
    expect(refused.body).toMatchObject({ ok: false, error: { code: 'not_connected' } });

    // A bad role name is refused and changes nothing.
    await page.goto(`${stack.baseUrl}/portal/accounts`);
    const bad = await postForm(page, `/portal/accounts/${org.id}/sharing`, { _csrf: await csrfOf(page), roles: 'eng, <b>x</b>' });
    expect(bad.status()).toBe(400);
    expect(await bad.text()).toContain('Not a role name: &#60;b&#62;x&#60;/b&#62;');
    expect((await getAccount(pool(), olga.user.tenantId, org.id))?.sharingRoles).toEqual(['eng']);
    await page.context().close();
  });

  it('an admin fills in an organisation account created without a credential', async () => {
    const empty = await insertAccount(pool(), stack.services.keyring, {
      tenantId: olga.user.tenantId,
      ownerUserId: null,
      integration: 'linear',
      label: 'Acme Linear (CLI)',
      sharingRoles: ['*'],
    });
    const page = await signedInPage(olga);
    await page.goto(`${stack.baseUrl}/portal/accounts`);
    const row = page.locator(`tr[data-org-account="${empty.id}"]`);
    expect(await row.textContent()).toContain('No credential yet');
    await row.getByRole('link', { name: 'Add key' }).click();
    expect((await submitKey(page, ORG_KEY)).status()).toBe(200);
    expect(await getAccount(pool(), olga.user.tenantId, empty.id)).toMatchObject({
      label: 'Acme Linear (CLI)',
      hasCredential: true,
      status: 'active',
    });
    expect(await readCredential(pool(), stack.services.keyring, olga.user.tenantId, empty.id)).toEqual({
      type: 'apikey',
      fields: { apiKey: ORG_KEY },
    });
    // A member may not put a key on it.
    const memberPage = await signedInPage(mo);
    expect((await memberPage.goto(`${stack.baseUrl}/portal/integrations/linear?account=${empty.id}`))?.status()).toBe(404);
    await memberPage.context().close();
    await page.context().close();
  });
});

describe('OAuth from the integrations page', () => {
  it('Connect starts a connection for the signed-in user and goes through the consent page', async () => {
    const page = await signedInPage(alice);
    await page.goto(`${stack.baseUrl}/portal/integrations`);
    await page.locator('tr[data-integration="github"]').getByRole('button', { name: 'Connect' }).click();
    await consentAs(page, auth, 'octo-alice');
    expect(await page.locator('h1').textContent()).toBe('Connected');
    const [account] = await accountsOf(alice, 'github');
    expect(account).toMatchObject({ scope: 'user', label: 'octo-alice', hasCredential: true });
    const { rows } = await pool().query(
      `SELECT status, account_scope FROM connection_attempts WHERE user_id = $1 AND integration = 'github' ORDER BY created_at DESC LIMIT 1`,
      [alice.user.id],
    );
    expect(rows[0]).toEqual({ status: 'CONNECTED', account_scope: 'user' });
    await page.context().close();
  });

  it("an admin's Connect for organisation stores an organisation account, shared with nobody", async () => {
    const page = await signedInPage(olga);
    await page.goto(`${stack.baseUrl}/portal/integrations`);
    await page.locator('tr[data-integration="github"]').getByRole('button', { name: 'Connect for organisation' }).click();
    await consentAs(page, auth, 'acme-bot');
    expect(await page.locator('h1').textContent()).toBe('Connected');
    const [org] = await orgAccounts('github');
    expect(org).toMatchObject({ scope: 'tenant', ownerUserId: null, label: 'acme-bot', sharingRoles: [], hasCredential: true });
    expect(await accountsOf(olga, 'github')).toEqual([]);
    await page.context().close();
  });
});

describe('Content-Security-Policy', () => {
  const directives = (header: string | undefined) =>
    Object.fromEntries(
      (header ?? '')
        .split(';')
        .map((d) => d.trim().split(/\s+/))
        .map(([name, ...values]) => [name, values]),
    );

  it('is strict on every portal page; only the pages with Connect buttons widen form-action to the consent origin', async () => {
    const page = await signedInPage(olga);
    const strictPages = ['/portal', '/portal/accounts', '/portal/integrations/linear', '/portal/integrations/linear?for=organisation'];
    for (const path of [...strictPages, '/portal/integrations', '/portal/integrations/github']) {
      const response = await page.goto(`${stack.baseUrl}${path}`);
      expect(response?.status(), path).toBe(200);
      const csp = directives(response?.headers()['content-security-policy']);
      expect(csp['default-src'], path).toEqual(["'self'"]);
      expect(csp['script-src'], path).toEqual(["'self'"]);
      expect(csp['script-src-attr'], path).toEqual(["'none'"]);
      expect(csp['object-src'], path).toEqual(["'none'"]);
      expect(csp['frame-ancestors'], path).toEqual(["'none'"]);
      expect(csp['form-action'], path).toEqual(strictPages.includes(path) ? ["'self'"] : ["'self'", auth.issuer]);
      // No inline script anywhere.
      expect(await response?.text(), path).not.toMatch(/<script/i);
      if (path === '/portal/integrations') await page.screenshot({ path: '/tmp/portal-integrations.png', fullPage: true });
    }
    await page.context().close();
  });
});
