import { csrfToken } from '../../server/portal/csrf.js';
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
