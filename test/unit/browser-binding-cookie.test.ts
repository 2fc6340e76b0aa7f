import type { Request, Response } from 'express';
import { describe, expect, it } from 'vitest';
import { TokenSigner } from '../../core/signed-tokens.js';
import { type Binding, bindBrowser, isBoundBrowser, unbindBrowser } from '../../features/connections/browser-binding.js';

/**
 * The binding cookies' attributes where the integration tests cannot see them: on https (Secure),
 * and under a PUBLIC_BASE_URL with a path prefix (the cookie's path is the browser's, not the
 * route's). Their value is a MAC of the step, bound to its expiry.
 */

const signer = new TokenSigner('a'.repeat(64));
const binding: Binding = { purpose: 'oauth-state', name: 'sb_oauth_x', path: '/oauth/callback', subject: 'state\ntenant\nuser' };

function recordingResponse() {
  const set: { name: string; value: string; options: Record<string, unknown> }[] = [];
  const cleared: { name: string; options: Record<string, unknown> }[] = [];
  const res = {
    cookie: (name: string, value: string, options: Record<string, unknown>) => set.push({ name, value, options }),
    clearCookie: (name: string, options: Record<string, unknown>) => cleared.push({ name, options }),
  } as unknown as Response;
  return { res, set, cleared };
}

const ctxAt = (url: string) => ({ config: { PUBLIC_BASE_URL: url }, signer }) as never;
const requestWith = (cookies: Record<string, string>) => ({ cookies }) as unknown as Request;

describe('binding cookies', () => {
  it('on https are Secure, HttpOnly and SameSite=Lax, at the public path of the step that finishes them', () => {
    const { res, set, cleared } = recordingResponse();
    const ctx = ctxAt('https://switchboard.example.com/sb');
    bindBrowser(ctx, res, binding, 600);
    expect(set).toHaveLength(1);
    expect(set[0].options).toEqual({ httpOnly: true, sameSite: 'lax', secure: true, path: '/sb/oauth/callback', maxAge: 600_000 });
    unbindBrowser(ctx, res, binding);
    expect(cleared[0].options).toEqual({ httpOnly: true, sameSite: 'lax', secure: true, path: '/sb/oauth/callback' });
  });

  it('a value made for another step, another purpose or with its expiry moved is not this browser’s', () => {
    const { res, set } = recordingResponse();
    const ctx = ctxAt('https://switchboard.example.com');
    bindBrowser(ctx, res, binding, 600);
    const value = set[0].value;
    expect(isBoundBrowser(ctx, requestWith({ sb_oauth_x: value }), binding)).toBe(true);
    expect(isBoundBrowser(ctx, requestWith({ sb_oauth_x: value }), { ...binding, subject: 'state\ntenant\nmallory' })).toBe(false);
    expect(isBoundBrowser(ctx, requestWith({ sb_oauth_x: value }), { ...binding, purpose: 'capture-session' })).toBe(false);
    const [expires, mac] = value.split('.');
    expect(isBoundBrowser(ctx, requestWith({ sb_oauth_x: `${Number(expires) + 3600}.${mac}` }), binding)).toBe(false);
    // Past its expiry the genuine value is refused even if a client kept it.
    const { res: res2, set: set2 } = recordingResponse();
    bindBrowser(ctx, res2, binding, 1);
    const stale = set2[0].value.replace(/^\d+/, String(Math.floor(Date.now() / 1000) - 1));
    expect(isBoundBrowser(ctx, requestWith({ sb_oauth_x: stale }), binding)).toBe(false);
  });
});
