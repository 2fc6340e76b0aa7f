import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endUserSessions } from '../../features/accounts/store/users.js';
import { keyTestsRefused } from '../../platform/telemetry/metrics.js';
import { KEY_TEST_RETRY_AFTER_SEC, KEY_TESTS_IN_FLIGHT } from '../../surfaces/portal/apikey-test-call.js';
import { createTestUser, type Stack, startStack, type TestUser } from '../support/harness.js';
import { startTestUpstream, type TestUpstream } from '../support/mcp-upstream-server.js';
import { openKeyForm, signInToPortal } from '../support/portal-session.js';

// Attacker: a signed-in member (or a tenant administrator with users of its own) re-posting the
// portal's API-key form with made-up keys by the hundred at once. Each submission is tested with a
// call to the service before anything is saved; unbounded, every one of them opens a session at the
// service and costs this process CPU that every other tenant shares (issue 29, hostile-tenant
// benchmark). The form admits KEY_TESTS_IN_FLIGHT per user and per tenant, and answers the rest 429
// at once; another tenant's user is not held back by it.

const GOOD_KEY = `good-${randomBytes(8).toString('hex')}`;
/** The service answers a wrong key this late, so a burst's tests are all in flight together. */
const REFUSAL_DELAY_MS = 1500;
const BURST = 30;

let upstream: TestUpstream;
let stack: Stack;

beforeAll(async () => {
  upstream = await startTestUpstream({ apiKey: GOOD_KEY, refusalDelayMs: REFUSAL_DELAY_MS });
  stack = await startStack({
    env: {
      UPSTREAM_MCP_ALLOWED_HOSTS: '127.0.0.1',
      UPSTREAM_MCP_SERVERS: JSON.stringify([
        { name: 'keyed', displayName: 'Keyed server', url: upstream.url, auth: { type: 'apikey', header: 'X-Api-Key', label: 'Key' } },
      ]),
      // The bound under test is not a rate limit: none may stop the burst first.
      RATE_LIMIT_PER_MINUTE: '1000000',
    },
  });
}, 120_000);

afterAll(async () => {
  await stack?.close();
  await upstream?.close();
});

const triedAtService = (prefix: string) => upstream.requests.filter((r) => r.apiKey?.startsWith(prefix)).length;
const sessionsOpened = (prefix: string) => new Set(upstream.requests.filter((r) => r.apiKey?.startsWith(prefix)).map((r) => r.apiKey)).size;

async function burst(user: TestUser, prefix: string, count: number) {
  const form = await openKeyForm(await signInToPortal(stack, user), 'keyed');
  const answers = await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const res = await form.send(`${prefix}${i}-${randomBytes(6).toString('hex')}`);
      return { status: res.status, retryAfter: res.headers.get('retry-after'), text: await res.text() };
    }),
  );
  return { form, answers };
}

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  if (!condition()) throw new Error('condition not met in 2 s');
}

/** switchboard_key_tests_refused_total now (this process's registry). */
async function refusedCount(): Promise<number> {
  const metric = await keyTestsRefused.get();
  return metric.values[0]?.value ?? 0;
}

describe("the portal's API-key form under a burst of made-up keys", () => {
  it('tests at most the per-user bound of keys at once, answers the rest 429 with Retry-After at once, and tests the next key normally afterwards', async () => {
    const attacker = await createTestUser(stack);
    const prefix = `burst-${randomBytes(3).toString('hex')}-`;
    const { form, answers } = await burst(attacker, prefix, BURST);

    const refused = answers.filter((a) => a.status === 400);
    const tooMany = answers.filter((a) => a.status === 429);
    expect(refused.length + tooMany.length, JSON.stringify(answers.map((a) => a.status))).toBe(BURST);
    expect(refused.length).toBe(KEY_TESTS_IN_FLIGHT.perUser);
    for (const a of refused) expect(a.text).toContain('Keyed server refused this key');
    for (const a of tooMany) {
      expect(a.retryAfter).toBe(String(KEY_TEST_RETRY_AFTER_SEC));
      expect(a.text).toContain('still testing another key you (or your organisation) submitted. Nothing was saved');
    }
    // Only the admitted keys reached the service; the rest opened nothing there (nor waited to: a queued one would be tested later).
    expect(sessionsOpened(prefix)).toBe(KEY_TESTS_IN_FLIGHT.perUser);

    // Places are given back: the attacker's (or a person's) next key is tested, and a good one saved.
    expect(await form.post(`${prefix}later`)).toBe(400);
    const saved = await form.send(GOOD_KEY);
    expect(saved.status, await saved.clone().text()).toBe(200);
    expect(await saved.text()).toContain('Keyed server');
    expect(triedAtService(prefix)).toBeGreaterThanOrEqual(KEY_TESTS_IN_FLIGHT.perUser + 1);
  }, 60_000);

  it('answers the refused posts of a burst before reading the store: the pool every tenant shares queues no query of theirs', async () => {
    const attacker = await createTestUser(stack);
    const prefix = `pool-${randomBytes(3).toString('hex')}-`;
    const form = await openKeyForm(await signInToPortal(stack, attacker), 'keyed');
    // Every session check reads the user's row (its session version): count those for this user.
    const pool = stack.services.pool;
    const query = pool.query.bind(pool);
    let sessionReads = 0;
    pool.query = ((text: unknown, values?: unknown[]) => {
      const sql = typeof text === 'string' ? text : ((text as { text?: string })?.text ?? '');
      if (sql.includes('session_version') && Array.isArray(values) && values[0] === attacker.user.id) sessionReads++;
      return query(text as never, values as never);
    }) as typeof pool.query;
    try {
      const statuses = await Promise.all(Array.from({ length: BURST }, (_, i) => form.post(`${prefix}${i}`)));
      expect(statuses.filter((s) => s === 429).length).toBe(BURST - KEY_TESTS_IN_FLIGHT.perUser);
      expect(sessionReads).toBe(KEY_TESTS_IN_FLIGHT.perUser);
    } finally {
      pool.query = query;
    }

    // The signature is not the whole check: once the user signed out everywhere, the same cookie saves nothing.
    await endUserSessions(pool, attacker.user.id);
    const after = await form.send(GOOD_KEY);
    expect(after.status).toBe(303);
    expect(after.headers.get('location')).toContain('/portal/login');
    expect(triedAtService(prefix)).toBe(KEY_TESTS_IN_FLIGHT.perUser);
  }, 60_000);

  it('answers the refused posts at the front: before the CSRF check and the form body, with no-store, and counted', async () => {
    const attacker = await createTestUser(stack);
    const prefix = `front-${randomBytes(3).toString('hex')}-`;
    const form = await openKeyForm(await signInToPortal(stack, attacker), 'keyed');
    const refusedBefore = await refusedCount();
    const admitted = Array.from({ length: KEY_TESTS_IN_FLIGHT.perUser }, (_, i) => form.post(`${prefix}${i}`));
    await waitFor(() => sessionsOpened(prefix) === KEY_TESTS_IN_FLIGHT.perUser);
    // While the user is at the bound: a post with no CSRF token and a body no route would take is refused 429, not 403/400.
    const { url, cookie } = form.parts;
    const junk = await fetch(url, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', origin: new URL(url).origin },
      body: 'a=1&a=2',
    });
    expect(junk.status).toBe(429);
    expect(junk.headers.get('cache-control')).toBe('no-store');
    expect(junk.headers.get('retry-after')).toBe(String(KEY_TEST_RETRY_AFTER_SEC));
    expect(await junk.text()).toContain('Nothing was saved');
    expect(await refusedCount()).toBe(refusedBefore + 1);
    expect(await Promise.all(admitted)).toEqual(Array(KEY_TESTS_IN_FLIGHT.perUser).fill(400));
  }, 60_000);

  it('refuses nobody at the front on a cookie that does not verify: a forged session naming a user at the bound goes on to the route', async () => {
    const victim = await createTestUser(stack);
    const prefix = `victim-${randomBytes(3).toString('hex')}-`;
    const form = await openKeyForm(await signInToPortal(stack, victim), 'keyed');
    const admitted = Array.from({ length: KEY_TESTS_IN_FLIGHT.perUser }, (_, i) => form.post(`${prefix}${i}`));
    await waitFor(() => sessionsOpened(prefix) === KEY_TESTS_IN_FLIGHT.perUser);
    // The victim's own cookie with its signature altered: the claims read the same, the signature does not hold.
    const { url, cookie, csrf, token } = form.parts;
    const forged = cookie.replace(
      /(sb_session=[^;]*?)(.)(.{4})(;|$)/,
      (_, rest: string, c: string, tail: string, end: string) => `${rest}${c === 'A' ? 'B' : 'A'}${tail}${end}`,
    );
    expect(forged).not.toBe(cookie);
    const res = await fetch(url, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: forged, 'content-type': 'application/x-www-form-urlencoded', origin: new URL(url).origin },
      body: new URLSearchParams({ _csrf: csrf, _form: token, field_apiKey: `${prefix}forged` }),
    });
    // Not 429: the route's own checks answer (its CSRF token is the real cookie's, so 403).
    expect(res.status).toBe(403);
    await Promise.all(admitted);
    expect(triedAtService(`${prefix}forged`)).toBe(0);
  }, 60_000);

  it("bounds a tenant's users together, and another tenant's user is tested while that tenant is at its bound", async () => {
    const admin = await createTestUser(stack, { roles: ['admin'] });
    const members = await Promise.all(
      Array.from({ length: KEY_TESTS_IN_FLIGHT.perTenant }, () => createTestUser(stack, { tenantId: admin.user.tenantId })),
    );
    const other = await createTestUser(stack);
    const prefix = `tenant-${randomBytes(3).toString('hex')}-`;
    const otherPrefix = `other-${randomBytes(3).toString('hex')}-`;
    const forms = await Promise.all([admin, ...members].map(async (u) => openKeyForm(await signInToPortal(stack, u), 'keyed')));
    const otherForm = await openKeyForm(await signInToPortal(stack, other), 'keyed');

    // Every user of the tenant posts the per-user bound at once: more than the tenant may test together.
    const tenantBurst = Promise.all(
      forms.flatMap((form, u) => Array.from({ length: KEY_TESTS_IN_FLIGHT.perUser }, (_, i) => form.post(`${prefix}${u}-${i}`))),
    );
    // Meanwhile (the tenant's tests hanging at the service), the other tenant's user submits one key.
    await new Promise((resolve) => setTimeout(resolve, REFUSAL_DELAY_MS / 3));
    const otherStatus = await otherForm.post(`${otherPrefix}0`);
    const statuses = await tenantBurst;

    expect(statuses.filter((s) => s === 400).length).toBe(KEY_TESTS_IN_FLIGHT.perTenant);
    expect(statuses.filter((s) => s === 429).length).toBe(statuses.length - KEY_TESTS_IN_FLIGHT.perTenant);
    expect(sessionsOpened(prefix)).toBe(KEY_TESTS_IN_FLIGHT.perTenant);
    expect(otherStatus).toBe(400);
    expect(triedAtService(otherPrefix)).toBeGreaterThan(0);
  }, 60_000);
});
