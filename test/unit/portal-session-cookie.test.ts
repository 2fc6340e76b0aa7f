import type { Request } from 'express';
import { describe, expect, it } from 'vitest';
import type { ServiceContext } from '../../features/context.js';
import { onlyCookie, sessionCookieName } from '../../surfaces/portal/session-cookie.js';

const ctxAt = (url: string) => ({ config: { PUBLIC_BASE_URL: url } }) as unknown as ServiceContext;
const request = (header: string, cookies: Record<string, string>) => ({ headers: { cookie: header }, cookies }) as unknown as Request;

describe('finding 9: the portal session cookie cannot be planted by a sibling subdomain', () => {
  it('finding 9: on https the session cookie has the __Host- prefix (this origin only, Secure, Path=/)', () => {
    expect(sessionCookieName(ctxAt('https://switchboard.example.com'))).toBe('__Host-sb_session');
    // Plain http (local development) cannot use the prefix: browsers refuse it without Secure.
    expect(sessionCookieName(ctxAt('http://127.0.0.1:3000'))).toBe('sb_session');
  });

  it('finding 9: a request carrying two cookies of the name has none (the planted one is sent first)', () => {
    expect(onlyCookie(request('sb_session=mallory; sb_session=alice', { sb_session: 'mallory' }), 'sb_session')).toBeUndefined();
    expect(onlyCookie(request('other=1; sb_session=alice', { sb_session: 'alice' }), 'sb_session')).toBe('alice');
    expect(onlyCookie(request('xsb_session=1', {}), 'sb_session')).toBeUndefined();
  });
});
