import { csrfToken } from '../../surfaces/portal/csrf.js';
import type { Stack, TestUser } from './stack.js';

/** The portal over plain HTTP for one signed-in user: what a browser's cookie jar and its forms would send. */
export interface PortalSession {
  cookie: string;
  /** The session's CSRF token, the one every portal form of the session carries. */
  csrf: string;
  get(path: string): Promise<Response>;
  /** Posts a form from the portal's own origin (redirects not followed). */
  post(path: string, body: string | URLSearchParams): Promise<Response>;
}

/**
 * Signs `user` in through a one-time login link, as a person clicking it does (a real session
 * cookie). `accept` is sent on every request when given (`text/html` makes error answers pages).
 */
export async function signInToPortal(stack: Stack, user: TestUser, options: { accept?: string } = {}): Promise<PortalSession> {
  const token = new URL(await user.loginLink()).searchParams.get('token')!;
  const res = await fetch(`${stack.baseUrl}/portal/login-link`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: stack.baseUrl },
    body: new URLSearchParams({ token, next: '/portal' }),
  });
  const cookie = res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  if (!cookie.includes('sb_session=')) throw new Error(`the login link answered ${res.status} without a session cookie`);
  const session = /sb_session=([^;]+)/.exec(cookie)?.[1] ?? '';
  const csrf = csrfToken(stack.services, { headers: { cookie }, cookies: { sb_session: session } } as never);
  const accept: Record<string, string> = options.accept ? { accept: options.accept } : {};
  return {
    cookie,
    csrf,
    get: (path) => fetch(`${stack.baseUrl}${path}`, { headers: { cookie, ...accept }, redirect: 'manual' }),
    post: (path, body) =>
      fetch(`${stack.baseUrl}${path}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie, ...accept, 'content-type': 'application/x-www-form-urlencoded', origin: stack.baseUrl },
        body,
      }),
  };
}

/** An API-key integration's portal form, opened once (its binding cookie and tokens), posted with any key as often as wanted (field `apiKey`). */
export async function openKeyForm(portal: PortalSession, integration: string) {
  const page = await portal.get(`/portal/integrations/${integration}`);
  const html = await page.text();
  const field = (name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(html)?.[1];
  const [csrf, token] = [field('_csrf'), field('_form')];
  const formCookie = page.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  if (page.status !== 200 || !csrf || !token || !formCookie) throw new Error(`the API-key form of ${integration} answered ${page.status}`);
  const cookie = `${portal.cookie}; ${formCookie}`;
  const base = new URL(page.url).origin;
  /** Submits `key`: the answer, unread. */
  const send = (key: string): Promise<Response> =>
    fetch(`${base}/portal/integrations/${integration}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', origin: base },
      body: new URLSearchParams({ _csrf: csrf, _form: token, field_apiKey: key }),
    });
  return {
    /** What a submission carries besides the key (for a sender elsewhere: test/support/hostile-attacker-thread.ts). */
    parts: { url: `${base}/portal/integrations/${integration}`, cookie, csrf, token },
    send,
    /** Submits `key`: the answer's status (its body read and dropped). */
    async post(key: string): Promise<number> {
      const res = await send(key);
      await res.arrayBuffer();
      return res.status;
    },
  };
}
