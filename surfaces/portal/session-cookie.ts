import type { Request, Response } from 'express';
import type { CallerOwner } from '../../core/caller.js';
import { endUserSessions, getSessionUser, type User } from '../../features/accounts/store/users.js';
import type { ServiceContext } from '../../features/context.js';

/**
 * The portal session: a signed HttpOnly cookie naming a user and their session version, how it is
 * started, read back and ended. What a page works with, the signed-in user with roles, is signed-in.ts.
 */

/** The signed-in human of the portal, kept in a signed HttpOnly cookie. */
type PortalUser = CallerOwner;

const SESSION_COOKIE = 'sb_session';
const SESSION_TTL_SEC = 12 * 3600;

const isHttps = (ctx: ServiceContext) => ctx.config.PUBLIC_BASE_URL.startsWith('https:');

/**
 * The session cookie's name. On https it has the `__Host-` prefix: a browser takes such a cookie
 * only from this exact origin (Secure, no Domain, Path=/), so a sibling subdomain of the same
 * site cannot plant a session of its own choosing here (cookie tossing, a login CSRF no Origin
 * check sees).
 */
export function sessionCookieName(ctx: ServiceContext): string {
  return isHttps(ctx) ? `__Host-${SESSION_COOKIE}` : SESSION_COOKIE;
}

/**
 * The value of the cookie `name`, or undefined — also when the request carries more than one of
 * that name: a second one was planted (another path, or a parent domain's cookie set by a
 * sibling subdomain), the browser sends it first, and neither can be trusted to be this
 * browser's own.
 */
export function onlyCookie(req: Request, name: string): string | undefined {
  const sent = (req.headers.cookie ?? '').split(';').filter((part) => part.trim().startsWith(`${name}=`)).length;
  const value = req.cookies?.[name];
  return sent === 1 && typeof value === 'string' ? value : undefined;
}

/** The portal session cookie this request carries (exactly one), or undefined. */
export function sessionCookieValue(ctx: ServiceContext, req: Request): string | undefined {
  return onlyCookie(req, sessionCookieName(ctx));
}

/**
 * The human whose session cookie this request carries, or undefined. The cookie names the user's
 * session version, compared with the stored one on every read: after a sign-out, a role change or
 * an API key revocation the version moved on, and every older cookie (copied, replayed, or still
 * in another browser) is refused.
 */
export async function readPortalUser(ctx: ServiceContext, req: Request): Promise<PortalUser | undefined> {
  const user = await readSessionUser(ctx, req);
  return user && { userId: user.id, tenantId: user.tenantId };
}

/** What a session cookie says, as signed: who, in which tenant, at which session version. */
export interface SessionClaims {
  userId: string;
  tenantId: string;
  version: string;
}

/**
 * The claims of this request's session cookie if its signature holds, without reading the store:
 * enough to bound work per user and tenant before any query (a burst of posts must not queue
 * hundreds of queries ahead of other tenants' in the shared pool). Whether the session still
 * holds (signed out, roles changed) is `readSessionUser`'s check, made after.
 */
export async function signedSessionClaims(ctx: ServiceContext, req: Request): Promise<SessionClaims | undefined> {
  const token = sessionCookieValue(ctx, req);
  if (token === undefined) return undefined;
  const claims = await ctx.signer.verify('portal-session', token);
  if (!claims || typeof claims.u !== 'string' || typeof claims.t !== 'string' || typeof claims.v !== 'string') return undefined;
  return { userId: claims.u, tenantId: claims.t, version: claims.v };
}

/** The same check as `readPortalUser`, answered with the user as stored now (roles read fresh). */
export async function readSessionUser(ctx: ServiceContext, req: Request): Promise<User | undefined> {
  const claims = await signedSessionClaims(ctx, req);
  return claims && sessionUserNow(ctx, claims);
}

/** The user the claims name if their session still holds in the store (same tenant, same session version). */
export async function sessionUserNow(ctx: ServiceContext, claims: SessionClaims): Promise<User | undefined> {
  const current = await getSessionUser(ctx.pool, claims.userId);
  if (!current || current.tenantId !== claims.tenantId || String(current.sessionVersion) !== claims.version) return undefined;
  const { sessionVersion: _, ...user } = current;
  return user;
}

export async function startPortalSession(ctx: ServiceContext, res: Response, user: PortalUser): Promise<void> {
  const current = await getSessionUser(ctx.pool, user.userId);
  if (!current || current.tenantId !== user.tenantId) throw new Error('portal session for an unknown user');
  const claims = { u: user.userId, t: user.tenantId, v: String(current.sessionVersion) };
  const token = await ctx.signer.sign('portal-session', claims, SESSION_TTL_SEC);
  res.cookie(sessionCookieName(ctx), token, {
    httpOnly: true,
    sameSite: 'lax',
    secure: isHttps(ctx),
    maxAge: SESSION_TTL_SEC * 1000,
    path: '/',
  });
}

/** Signs the human out everywhere: every session of theirs ends, not only this browser's cookie. */
export async function endPortalSession(ctx: ServiceContext, req: Request, res: Response): Promise<void> {
  const human = await readPortalUser(ctx, req);
  if (human) await endUserSessions(ctx.pool, human.userId);
  res.clearCookie(sessionCookieName(ctx), { path: '/', secure: isHttps(ctx), httpOnly: true, sameSite: 'lax' });
}
