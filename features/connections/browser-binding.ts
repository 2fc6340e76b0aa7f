import { timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';
import type { ConnectionServices } from './services.js';

/** What a binding needs: the public base URL (the cookie's path and Secure flag) and the MAC key. */
export type BindingDeps = Pick<ConnectionServices, 'config' | 'signer'>;

/**
 * Binds a step of a connection flow to the browser that started it: the page that starts the
 * step sets a short-lived HttpOnly, SameSite=Lax cookie holding a MAC (the server's signing key)
 * of what the step is about (an OAuth state, a capture session, a form), scoped to the one path
 * that finishes the step; that path requires the cookie to match. A link, a consent URL or a
 * capture URL handed to another browser is then worth nothing there, even to the same user.
 *
 * The cookie's value is `<expiry seconds>.<MAC of subject and expiry>`, so a copied value stops
 * working at its expiry even if a client ignores Max-Age.
 */
export interface Binding {
  /** Keys the MAC, so one kind of binding never stands in for another. */
  purpose: string;
  /** The cookie's name; several bindings on one path need distinct names. */
  name: string;
  /** The path (under PUBLIC_BASE_URL) that finishes the step: the only one the browser sends it to. */
  path: string;
  /** What the step is about, e.g. the OAuth state and the attempt's owner. */
  subject: string;
}

const nowSec = () => Math.floor(Date.now() / 1000);

/** The path as the browser sees it: PUBLIC_BASE_URL may put the service under a prefix. */
function publicPath(ctx: BindingDeps, path: string): string {
  return `${new URL(ctx.config.PUBLIC_BASE_URL).pathname.replace(/\/$/, '')}${path}`;
}

function cookieOptions(ctx: BindingDeps, binding: Binding) {
  return {
    httpOnly: true,
    sameSite: 'lax' as const,
    secure: ctx.config.PUBLIC_BASE_URL.startsWith('https:'),
    path: publicPath(ctx, binding.path),
  };
}

const valueFor = (ctx: BindingDeps, binding: Binding, expires: number) =>
  `${expires}.${ctx.signer.mac(`browser-binding:${binding.purpose}`, `${binding.subject}\n${expires}`)}`;

/** Sets the binding cookie on this response, valid for `ttlSec` (at least one second). */
export function bindBrowser(ctx: BindingDeps, res: Response, binding: Binding, ttlSec: number): void {
  const ttl = Math.max(1, Math.floor(ttlSec));
  res.cookie(binding.name, valueFor(ctx, binding, nowSec() + ttl), { ...cookieOptions(ctx, binding), maxAge: ttl * 1000 });
}

/** Whether this request carries the binding's cookie, unexpired and made for exactly this subject. */
export function isBoundBrowser(ctx: BindingDeps, req: Request, binding: Binding): boolean {
  const sent = req.cookies?.[binding.name];
  if (typeof sent !== 'string') return false;
  const expires = Number(sent.slice(0, sent.indexOf('.')));
  if (!Number.isSafeInteger(expires) || expires <= nowSec()) return false;
  const expected = Buffer.from(valueFor(ctx, binding, expires));
  const got = Buffer.from(sent);
  return got.length === expected.length && timingSafeEqual(got, expected);
}

/** Removes the binding cookie: a step is finished once. */
export function unbindBrowser(ctx: BindingDeps, res: Response, binding: Binding): void {
  res.clearCookie(binding.name, cookieOptions(ctx, binding));
}
