import { describe, expect, it } from 'vitest';
import { getAccount } from '../../features/accounts/store/accounts.js';
import { startWorld } from '../support/harness.js';
import { signInToPortal } from '../support/portal-session.js';

// What a person (or whoever drives their browser, or a page that posts to the portal) can put in
// every address, query string and form field of the portal and the connection pages: U+0000 (which
// no Postgres text or jsonb value can hold), lone UTF-16 surrogates in JSON text, a field given
// twice or as `a[b]`, empty fields, and very long bodies. Each answers a 4xx that names the problem
// (or keeps the value safely) — never a 500, a stack trace or half-written state.

const world = await startWorld({ clients: { github: {} }, apis: true, env: { UPSTREAM_MCP_ALLOWED_HOSTS: '127.0.0.1' } });
const { stack, apis } = world;
const { pool } = stack.services;
const LINEAR_KEY = 'lin_api_portal_input_key';
apis.state.linear.grantKey(LINEAR_KEY, { name: 'Ada Example', email: 'ada@linear.example' });

const ada = await world.user({ email: 'ada@example.com', roles: ['admin'] });
const accountId = (await world.connectGithub(ada, 'ada-input')).account.id;

const portal = await signInToPortal(stack, ada, { accept: 'text/html' });

/** The hidden fields of the API-key form for linear (its one-time `_form` token among them). */
async function apiKeyFormFields(): Promise<Record<string, string>> {
  const page = await (await portal.get('/portal/integrations/linear')).text();
  return Object.fromEntries([...page.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1], m[2]]));
}

/** Every portal form, as a browser would post it: path and fields (a valid CSRF token in each). */
async function forms(): Promise<{ name: string; path: string; fields: Record<string, string> }[]> {
  const csrf = { _csrf: portal.csrf };
  return [
    { name: 'login-link', path: '/portal/login-link', fields: { token: 'not-a-token', next: '/portal' } },
    { name: 'rename', path: `/portal/accounts/${accountId}/label`, fields: { ...csrf, label: 'Work' } },
    { name: 'sharing', path: `/portal/accounts/${accountId}/sharing`, fields: { ...csrf, roles: 'admin' } },
    { name: 'default', path: `/portal/accounts/${accountId}/default`, fields: csrf },
    { name: 'connect', path: '/portal/integrations/github/connect', fields: { ...csrf, for: 'organisation' } },
    { name: 'api key', path: '/portal/integrations/linear', fields: { ...(await apiKeyFormFields()), field_apiKey: 'lin_api_wrong' } },
    {
      name: 'api key for an account',
      path: '/portal/integrations/linear',
      fields: { _csrf: portal.csrf, account: accountId, field_apiKey: 'x' },
    },
    { name: 'upstream add', path: '/portal/upstreams', fields: { ...csrf, catalog: '', entry: '{}' } },
    { name: 'upstream remove', path: '/portal/upstreams/nothing-here/remove', fields: csrf },
    {
      name: 'approval',
      path: '/portal/approvals/00000000-0000-4000-8000-000000000000',
      fields: { ...csrf, decision: 'deny', reason: 'no' },
    },
  ];
}

/** A 4xx (or a redirect) with the server's own page or JSON: never a 500 or a stack trace. */
async function expectHandled(res: Response, what: string): Promise<string> {
  const text = await res.text();
  expect(res.status, `${what}: ${text.slice(0, 300)}`).toBeLessThan(500);
  expect(text, what).not.toMatch(/\n\s+at |invalid byte sequence|TypeError|Internal error/);
  return text;
}

describe('portal input', () => {
  it('U+0000 in any address of the portal, connect link or OAuth callback: a 4xx naming it, never a 500', async () => {
    const gets = [
      '/portal/accounts?done=%00',
      '/portal/integrations/%00',
      `/portal/integrations/linear?account=%00`,
      `/portal/integrations/linear?account=${accountId}%00`,
      '/portal/approvals/%00',
      '/portal/login-link?token=%00',
      '/portal/login?next=/portal%00',
      '/portal/oidc/callback?state=%00&code=x',
      '/portal/capture/%00',
      '/portal/upstreams?done=%00',
      '/connect/github?t=%00',
      '/connect/%00?t=x',
      '/oauth/callback?state=%00&code=x',
      '/oauth/callback?state=x%00&error=access_denied',
      '/oauth/callback?state=x&code=%00',
    ];
    for (const path of gets) {
      const res = await portal.get(path);
      const text = await expectHandled(res, `GET ${path}`);
      expect(text, path).toContain('U+0000');
      expect(res.status, path).toBe(path.split('?')[0].includes('%00') ? 404 : 400);
    }
    const posts = [
      `/portal/accounts/%00/label`,
      `/portal/accounts/${accountId}%00/default`,
      `/portal/accounts/${accountId}%00/disconnect`,
      '/portal/integrations/%00',
      '/portal/integrations/%00/connect',
      '/portal/upstreams/%00/remove',
    ];
    for (const path of posts) {
      const res = await portal.post(path, new URLSearchParams({ _csrf: portal.csrf, label: 'x' }));
      expect(await expectHandled(res, `POST ${path}`), path).toContain('U+0000');
      expect(res.status, path).toBe(404);
    }
    // A path whose percent-escapes are not UTF-8 (an encoded lone surrogate among them) is a 400 page too.
    for (const path of ['/portal/approvals/%ED%A0%80', '/portal/approvals/%E0%A4%A']) {
      const res = await portal.get(path);
      expect([res.status, res.headers.get('content-type')], path).toEqual([400, expect.stringContaining('text/html')]);
      await expectHandled(res, path);
    }
    // An API client hears the same in JSON, and the query parameter is named.
    const api = await fetch(`${stack.baseUrl}/v1/tools/list_connections?integration=%00`, { method: 'POST' });
    expect([api.status, await api.json()]).toEqual([
      400,
      { error: `The address's query parameter "integration" contains U+0000 (a NUL character), which no value here can hold.` },
    ]);
    const account = await getAccount(pool, ada.user.tenantId, accountId);
    expect(account?.label).not.toBe('x');
  });

  it('U+0000 in any field of any portal form: a 4xx naming it, nothing changed, never a 500', async () => {
    for (const form of await forms()) {
      for (const field of Object.keys(form.fields)) {
        const fields = { ...form.fields, [field]: `${form.fields[field]}\u0000x` };
        await expectHandled(await portal.post(form.path, new URLSearchParams(fields)), `${form.name}: ${field}`);
      }
    }
    // Refused by name, nothing changed: a label is not saved as something else than was sent.
    const before = (await getAccount(pool, ada.user.tenantId, accountId))?.label;
    const renamed = await portal.post(
      `/portal/accounts/${accountId}/label`,
      new URLSearchParams({ _csrf: portal.csrf, label: 'Work\u0000x' }),
    );
    expect(renamed.status).toBe(400);
    expect(await renamed.text()).toContain('The form field &#34;label&#34; contains U+0000');
    expect((await getAccount(pool, ada.user.tenantId, accountId))?.label).toBe(before);
    const keyed = await portal.post(
      '/portal/integrations/linear',
      new URLSearchParams({ _csrf: portal.csrf, account: `${accountId}\u0000` }),
    );
    expect(keyed.status).toBe(400);
  });

  it('a field given twice, or as a[b]=c, or empty: a 4xx naming it, never a 500', async () => {
    for (const form of await forms()) {
      for (const field of Object.keys(form.fields)) {
        const base = new URLSearchParams(form.fields);
        const twice = new URLSearchParams(base);
        twice.append(field, form.fields[field]);
        const res = await portal.post(form.path, twice);
        expect(await expectHandled(res, `${form.name}: ${field} twice`)).toContain(
          `The form field &#34;${field}&#34; was sent more than once`,
        );
        expect(res.status).toBe(400);
        const nested = new URLSearchParams(base);
        nested.delete(field);
        nested.append(`${field}[a]`, form.fields[field]);
        await expectHandled(await portal.post(form.path, nested), `${form.name}: ${field}[a]`);
        const empty = new URLSearchParams({ ...form.fields, [field]: '' });
        await expectHandled(await portal.post(form.path, empty), `${form.name}: ${field} empty`);
      }
    }
    for (const path of ['/connect/github?t=a&t=b', '/oauth/callback?state=a&state=b', '/portal/login-link?token=a&token=b']) {
      await expectHandled(await portal.get(path), path);
    }
  });

  it('JSON text in a form field with U+0000 or a lone surrogate (an upstream entry): a 4xx naming it, never a 500', async () => {
    for (const bad of ['\\u0000', '\\ud800', '\\udc00x']) {
      const entry = `{"name":"nul-test","displayName":"Bad ${bad}","url":"http://127.0.0.1:9/mcp"}`;
      const res = await portal.post('/portal/upstreams', new URLSearchParams({ _csrf: portal.csrf, entry }));
      expect(await expectHandled(res, bad)).toContain('displayName: U+0000 or an unpaired surrogate, which no entry can hold');
      expect(res.status).toBe(400);
    }
    const { rows } = await pool.query('SELECT count(*)::int AS n FROM tenant_upstream_servers WHERE tenant_id = $1', [ada.user.tenantId]);
    expect(rows[0].n).toBe(0);
  });

  it('a 1 MB form body, a 100 kB field and a 100 kB query string: a 4xx, never a 500 or a hang', async () => {
    for (const form of await forms()) {
      const big = new URLSearchParams({ ...form.fields, filler: 'x'.repeat(1024 * 1024) });
      const res = await portal.post(form.path, big);
      expect(await expectHandled(res, `${form.name}: 1 MB`)).toContain('Request body too large');
      expect(res.status).toBe(413);
      const field = Object.keys(form.fields).at(-1)!;
      const long = new URLSearchParams({ ...form.fields, [field]: 'x'.repeat(100 * 1024) });
      expect((await portal.post(form.path, long)).status, `${form.name}: 100 kB ${field}`).toBe(413);
    }
    for (const path of ['/connect/github?t=', '/oauth/callback?state=', '/portal/login-link?token=']) {
      // Node refuses a request line and headers over 16 kB before any route: 431.
      expect((await portal.get(`${path}${'x'.repeat(100 * 1024)}`)).status, `${path} 100 kB`).toBe(431);
    }
  });
});
