import { lookup } from 'node:dns/promises';
import type http from 'node:http';
import { hostname } from 'node:os';
import type { Browser } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { classifyAddress } from '../../core/network-policy.js';
import { updateTenantSettings } from '../../features/accounts/store/tenants.js';
import { createTestUser, type Stack, startWorld, type TestUser } from '../support/harness.js';

/** A test HTTP server on 127.0.0.1 that records the paths it was asked for, stopped with the world. */
async function serve(handler: http.RequestListener) {
  const hits: string[] = [];
  const server = await world.serve((req, res) => {
    hits.push(req.url ?? '');
    handler(req, res);
  });
  return { ...server, hits };
}

const execute = (user: TestUser, name: string, args: Record<string, unknown> = {}) =>
  user.call('connections_execute', { name, arguments: args }).then((r) => r.body);

const world = await startWorld();
const plain = world.stack;
const alice = await world.user();
const bob = await world.user({ tenantId: alice.user.tenantId });
const carol = await world.user(); // another tenant
// These tests are about the notes themselves: deleting one runs at once, without a person's
// approval (test/integration/approvals.test.ts covers the approval of destructive calls).
for (const tenantId of [alice.user.tenantId, carol.user.tenantId]) {
  await updateTenantSettings(plain.services.pool, tenantId, { approveDestructive: false });
}

describe('jots', () => {
  it('creates, reads, lists with a cursor, updates and deletes notes', async () => {
    const created = await execute(alice, 'jots__create_note', {
      title: 'Groceries',
      body: 'Eggs, milk and bread',
      tags: ['Home', 'home', 'list'],
    });
    expect(created).toEqual({
      ok: true,
      result: {
        id: expect.stringMatching(/^jot_/),
        title: 'Groceries',
        body: 'Eggs, milk and bread',
        tags: ['home', 'list'],
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      },
    });
    const id = created.result.id;
    expect(await execute(alice, 'jots__get_note', { id })).toEqual({ ok: true, result: created.result });

    for (const n of [1, 2, 3]) await execute(alice, 'jots__create_note', { title: `Note ${n}`, body: `Body ${n}` });
    const first = await execute(alice, 'jots__list_notes', { limit: 3 });
    expect(first.result.notes.map((n: { title: string }) => n.title)).toEqual(['Note 3', 'Note 2', 'Note 1']);
    expect(first.result.notes[0]).toEqual({
      id: expect.any(String),
      title: 'Note 3',
      tags: [],
      preview: 'Body 3',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(first.result.nextCursor).toEqual(expect.any(String));
    const second = await execute(alice, 'jots__list_notes', { limit: 3, cursor: first.result.nextCursor });
    expect(second.result).toEqual({ notes: [expect.objectContaining({ id, title: 'Groceries' })], nextCursor: null });
    expect((await execute(alice, 'jots__list_notes', {})).result.notes).toHaveLength(4);
    expect(await execute(alice, 'jots__list_notes', { cursor: 'bogus' })).toMatchObject({
      ok: false,
      error: { message: expect.stringContaining('Invalid cursor') },
    });

    const updated = await execute(alice, 'jots__update_note', { id, body: 'Eggs, oat milk and bread', tags: [] });
    expect(updated.result).toMatchObject({
      id,
      title: 'Groceries',
      body: 'Eggs, oat milk and bread',
      tags: [],
      createdAt: created.result.createdAt,
    });
    expect(updated.result.updatedAt >= created.result.updatedAt).toBe(true);
    expect(await execute(alice, 'jots__update_note', { id })).toMatchObject({ ok: false, error: { code: 'invalid_arguments' } });

    expect(await execute(alice, 'jots__delete_note', { id })).toEqual({ ok: true, result: { deleted: true, id } });
    expect(await execute(alice, 'jots__get_note', { id })).toMatchObject({
      ok: false,
      error: { code: 'tool_failed', message: expect.stringContaining(`No note with id ${id}.`) },
    });
    expect(await execute(alice, 'jots__delete_note', { id })).toMatchObject({
      ok: false,
      error: { message: expect.stringContaining(`No note with id ${id}.`) },
    });
  });

  it('searches full text, ranked, with stemming, phrases and exclusions', async () => {
    await execute(alice, 'jots__create_note', {
      title: 'Deployment checklist',
      body: 'Run the migrations, then deploy the worker.',
      tags: ['ops'],
    });
    await execute(alice, 'jots__create_note', { title: 'Holiday plans', body: 'Maybe deploy a tent by the lake.' });
    await execute(alice, 'jots__create_note', { title: 'Recipes', body: 'Pancakes need eggs.', tags: ['cooking'] });

    const hits = (await execute(alice, 'jots__search_notes', { query: 'deploying' })).result.notes;
    expect(hits.map((n: { title: string }) => n.title)).toEqual(['Deployment checklist', 'Holiday plans']); // title matches rank first
    expect(hits[0]).toMatchObject({ rank: expect.any(Number), snippet: expect.stringContaining('«deploy»') });
    expect(hits[0].rank).toBeGreaterThan(hits[1].rank);
    expect(
      (await execute(alice, 'jots__search_notes', { query: 'deploy -tent' })).result.notes.map((n: { title: string }) => n.title),
    ).toEqual(['Deployment checklist']);
    expect((await execute(alice, 'jots__search_notes', { query: '"by the lake"' })).result.notes).toHaveLength(1);
    expect((await execute(alice, 'jots__search_notes', { query: 'cooking' })).result.notes[0].title).toBe('Recipes'); // tags are searched
    expect((await execute(alice, 'jots__search_notes', { query: 'submarine' })).result.notes).toEqual([]);
  });

  it('keeps notes private: another user or tenant sees them as missing', async () => {
    const { result: note } = await execute(alice, 'jots__create_note', {
      title: 'Secret plan',
      body: 'Only Alice knows about the zeppelin.',
    });
    const missingText = (id: string) => `No note with id ${id}.`;
    for (const other of [bob, carol]) {
      for (const [tool, args] of [
        ['jots__get_note', { id: note.id }],
        ['jots__update_note', { id: note.id, title: 'Mine now' }],
        ['jots__delete_note', { id: note.id }],
      ] as const) {
        const answer = await execute(other, tool, args);
        const nowhere = await execute(other, tool, { ...args, id: 'jot_doesnotexist' });
        expect(answer).toMatchObject({ ok: false, error: { code: 'tool_failed' } });
        // Indistinguishable from a note that does not exist.
        expect(answer.error.message.replace(note.id, 'X')).toBe(nowhere.error.message.replace('jot_doesnotexist', 'X'));
        expect(answer.error.message).toContain(missingText(note.id));
      }
      expect((await execute(other, 'jots__search_notes', { query: 'zeppelin' })).result.notes).toEqual([]);
      expect((await execute(other, 'jots__list_notes', {})).result.notes.some((n: { id: string }) => n.id === note.id)).toBe(false);
    }
    expect((await execute(alice, 'jots__get_note', { id: note.id })).result.title).toBe('Secret plan');
  });

  it('enforces the size limits', async () => {
    expect(await execute(alice, 'jots__create_note', { title: 't'.repeat(201), body: 'x' })).toMatchObject({
      ok: false,
      error: { code: 'invalid_arguments', issues: [expect.objectContaining({ path: ['title'] })] },
    });
    expect(await execute(alice, 'jots__create_note', { title: 'Big', body: 'é'.repeat(50_001) })).toMatchObject({
      ok: false,
      error: {
        code: 'invalid_arguments',
        issues: [expect.objectContaining({ path: ['body'], message: expect.stringContaining('100 kB') })],
      },
    });
    expect((await execute(alice, 'jots__create_note', { title: 'Just fits', body: 'x'.repeat(100_000) })).ok).toBe(true);
  });

  it('writes an audit row per call, with argument names only', async () => {
    const { rows } = await plain.services.pool.query(
      `SELECT tool, outcome, error_code, arg_names FROM audit_log WHERE actor_user_id = $1 AND tool LIKE 'jots__%' ORDER BY id`,
      [alice.user.id],
    );
    expect(rows.length).toBeGreaterThanOrEqual(20);
    expect(rows[0]).toEqual({ tool: 'jots__create_note', outcome: 'ok', error_code: null, arg_names: ['title', 'body', 'tags'] });
    expect(rows).toContainEqual({ tool: 'jots__delete_note', outcome: 'ok', error_code: null, arg_names: ['id'] });
    expect(rows).toContainEqual(expect.objectContaining({ tool: 'jots__get_note', outcome: 'error', error_code: 'tool_failed' }));
    expect(JSON.stringify(rows)).not.toContain('zeppelin');
  });
});

describe('browser', () => {
  let site: Awaited<ReturnType<typeof serve>>;
  let target: Awaited<ReturnType<typeof serve>>;
  let allowed: Stack;
  let dave: TestUser;
  let chromium: Browser;
  const page = (path: string) => `http://127.0.0.1:${site.port}${path}`;

  beforeAll(async () => {
    // The address the policy must keep pages away from: it records every request that reaches it.
    target = await serve((_req, res) => res.end('internal secret'));
    const refused = `127.0.0.1:${target.port}`;
    site = await serve((req, res) => {
      const html = (body: string) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
      switch (req.url) {
        case '/':
          return html(`<!doctype html><html><head><title>Test shop</title><script src="http://localhost:${target.port}/script.js"></script></head>
            <body><h1>Welcome to the test shop</h1><p>Fresh bread every morning.</p><p hidden>not shown</p>
            <p>We bake with flour from the mill down the road, and we open at seven every day but Sunday.</p>
            <ul><li class="item" data-sku="b1"><a href="/bread">Bread</a></li><li class="item" data-sku="m2"><a href="/milk">Milk</a></li>
            <li class="item" data-sku="e3"><a href="https://example.org/eggs">Eggs</a></li></ul>
            <img src="http://${refused}/pixel.png"><img src="/bounce.png"><iframe src="http://${refused}/frame"></iframe>
            <script>fetch('http://${refused}/fetch').catch(() => {});</script></body></html>`);
        case '/bounce.png':
          return res.writeHead(302, { location: `http://${refused}/bounced.png` }).end();
        case '/redirect':
          return res.writeHead(302, { location: `http://${refused}/` }).end();
        case '/slow':
          return; // never answers
        case '/huge': {
          res.writeHead(200, { 'content-type': 'text/html' });
          const chunk = '<p>A line of a very long page.</p>\n'.repeat(2000);
          let sent = 0;
          const pump = () => {
            while (sent < 64) {
              sent++;
              if (!res.write(chunk)) return void res.once('drain', pump);
            }
            res.end();
          };
          return pump();
        }
        default:
          return html(`<title>${req.url}</title><p>page ${req.url}</p>`);
      }
    });
    // The test's own browser (to decode screenshots) starts while the stack does.
    [allowed, chromium] = await Promise.all([
      world.startStack({
        env: {
          BROWSER_ALLOWED_HOSTS: `127.0.0.1:${site.port}`,
          BROWSER_PAGE_TIMEOUT_MS: '20000',
          BROWSER_MAX_PAGE_BYTES: String(1024 * 1024),
          CONNECTIONS_TOOL_TIMEOUT_MS: '40000',
        },
      }),
      world.browser(),
    ]);
    dave = await createTestUser(allowed);
  }, 120_000);

  it('refuses a page on 127.0.0.1 by default (loopback)', async () => {
    const answer = await execute(alice, 'browser__open_page', { url: page('/') });
    expect(answer).toMatchObject({
      ok: false,
      error: { code: 'tool_failed', message: expect.stringContaining('127.0.0.1 is a loopback address') },
    });
    expect(answer.error.message).toContain('BROWSER_ALLOWED_HOSTS');
    expect(site.hits).toEqual([]);
  });

  it('refuses file:, ftp: and other schemes as invalid arguments', async () => {
    for (const url of ['file:///etc/passwd', `ftp://127.0.0.1:${site.port}/`, 'javascript:alert(1)', 'not a url']) {
      const answer = await execute(dave, 'browser__open_page', { url });
      expect(answer, url).toMatchObject({
        ok: false,
        error: { code: 'invalid_arguments', issues: [{ path: ['url'], message: expect.stringContaining('http:// or https://') }] },
      });
    }
  });

  it('open_page: text and links of an allowed host; refused subresources never leave', async () => {
    const [answer, cut] = await Promise.all([
      execute(dave, 'browser__open_page', { url: page('/') }),
      execute(dave, 'browser__open_page', { url: page('/'), maxChars: 100, maxLinks: 1 }),
    ]);
    expect(answer.ok).toBe(true);
    const result = answer.result;
    expect(result).toMatchObject({ url: page('/'), status: 200, title: 'Test shop', truncated: false, linkCount: 3 });
    expect(result.text).toContain('Welcome to the test shop');
    expect(result.text).toContain('Fresh bread every morning.');
    expect(result.text).not.toContain('not shown');
    expect(result.links).toEqual([
      { text: 'Bread', href: page('/bread') },
      { text: 'Milk', href: page('/milk') },
      { text: 'Eggs', href: 'https://example.org/eggs' },
    ]);
    expect(result.blockedRequests).toBeGreaterThanOrEqual(4);
    expect(site.hits).toContain('/bounce.png'); // its redirect to the refused address is stopped by the proxy
    expect(target.hits).toEqual([]);

    expect(cut.result).toMatchObject({ truncated: true, linkCount: 3, links: [{ text: 'Bread', href: page('/bread') }] });
    expect(cut.result.text.length).toBe(100);
  });

  it('extract: elements by CSS selector, with an attribute; a bad selector says so', async () => {
    const [items, links, bad] = await Promise.all([
      execute(dave, 'browser__extract', { url: page('/'), selector: 'li.item', attribute: 'data-sku', limit: 2 }),
      execute(dave, 'browser__extract', { url: page('/'), selector: 'li a', attribute: 'href' }),
      execute(dave, 'browser__extract', { url: page('/'), selector: 'li[' }),
    ]);
    expect(items).toEqual({
      ok: true,
      result: {
        url: page('/'),
        selector: 'li.item',
        count: 3,
        items: [
          { text: 'Bread', value: 'b1' },
          { text: 'Milk', value: 'm2' },
        ],
      },
    });
    expect(links, JSON.stringify(links)).toMatchObject({ ok: true });
    expect(links.result.items.map((i: { value: string }) => i.value)).toEqual([page('/bread'), page('/milk'), 'https://example.org/eggs']);
    expect(bad).toMatchObject({
      ok: false,
      error: { message: expect.stringContaining('not a valid CSS selector') },
    });
  });

  it('screenshot: a JPEG that decodes and fits the result cap', async () => {
    const answer = await execute(dave, 'browser__screenshot', { url: page('/') });
    expect(answer.ok).toBe(true);
    expect(answer.truncated).toBeUndefined();
    const shot = answer.result;
    expect(shot).toMatchObject({ url: page('/'), mimeType: 'image/jpeg', width: 800, height: 500, quality: 50, fullPage: false });
    expect(Buffer.byteLength(JSON.stringify(shot))).toBeLessThanOrEqual(allowed.services.config.CONNECTIONS_TOOL_RESULT_MAX_BYTES);
    const bytes = Buffer.from(shot.data, 'base64');
    expect([bytes[0], bytes[1], bytes.at(-2), bytes.at(-1)]).toEqual([0xff, 0xd8, 0xff, 0xd9]);
    const viewer = await chromium.newPage();
    const decoded = await viewer.evaluate(async (src) => {
      const img = new Image();
      img.src = src;
      await img.decode();
      return { width: img.naturalWidth, height: img.naturalHeight };
    }, `data:image/jpeg;base64,${shot.data}`);
    expect(decoded).toEqual({ width: shot.width, height: shot.height });
  });

  it('refuses a redirect from an allowed host to a refused address', async () => {
    const answer = await execute(dave, 'browser__open_page', { url: page('/redirect') });
    expect(answer).toMatchObject({
      ok: false,
      error: { message: expect.stringContaining(`Refused to open http://127.0.0.1:${target.port}/`) },
    });
    expect(answer.error.message).toContain('loopback');
    expect(target.hits).toEqual([]);
  });

  it('refuses host names that resolve to loopback', async () => {
    const before = site.hits.length;
    const names = ['localhost'];
    // This machine's own name usually resolves to a loopback address too (127.0.1.1 on Debian).
    const own = await lookup(hostname(), { all: true }).catch(() => []);
    if (own.length && own.every((a) => !classifyAddress(a.address).allowed)) names.push(hostname());
    for (const name of names) {
      const answer = await execute(dave, 'browser__screenshot', { url: `http://${name}:${site.port}/` });
      expect(answer, name).toMatchObject({
        ok: false,
        error: { message: expect.stringMatching(new RegExp(`${name} resolves to .*loopback`)) },
      });
    }
    expect(site.hits.length).toBe(before);
  });

  it('stops a slow page at the time limit and a huge one at the size limit', async () => {
    const [slow, huge] = await Promise.all([
      execute(dave, 'browser__open_page', { url: page('/slow') }),
      execute(dave, 'browser__open_page', { url: page('/huge') }),
    ]);
    expect(slow).toMatchObject({ ok: false, error: { message: expect.stringContaining('did not load within 20000 ms') } });
    expect(slow.error.message).toContain('BROWSER_PAGE_TIMEOUT_MS');
    expect(huge).toMatchObject({
      ok: false,
      error: { message: expect.stringContaining("larger than the browser's size limit of 1048576 bytes") },
    });
    expect(target.hits).toEqual([]);
  });
});
