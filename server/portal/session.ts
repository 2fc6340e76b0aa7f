import type { Request, Response } from 'express';
import { endUserSessions, getSessionVersion } from '../../store/users.js';
import type { ServiceContext } from '../context.js';

/** The signed-in human of the portal, kept in a signed HttpOnly cookie. */
export interface PortalUser {
  userId: string;
  tenantId: string;
}

export const SESSION_COOKIE = 'sb_session';
const SESSION_TTL_SEC = 12 * 3600;

/**
 * The human whose session cookie this request carries, or undefined. The cookie names the user's
 * session version, compared with the stored one on every read: after a sign-out, a role change or
 * an API key revocation the version moved on, and every older cookie (copied, replayed, or still
 * in another browser) is refused.
 */
export async function readPortalUser(ctx: ServiceContext, req: Request): Promise<PortalUser | undefined> {
  const token = req.cookies?.[SESSION_COOKIE];
  if (typeof token !== 'string') return undefined;
  const claims = await ctx.signer.verify('portal-session', token);
  if (!claims || typeof claims.u !== 'string' || typeof claims.t !== 'string' || typeof claims.v !== 'string') return undefined;
  const current = await getSessionVersion(ctx.pool, claims.u);
  if (!current || current.tenantId !== claims.t || String(current.sessionVersion) !== claims.v) return undefined;
  return { userId: claims.u, tenantId: claims.t };
}

export async function startPortalSession(ctx: ServiceContext, res: Response, user: PortalUser): Promise<void> {
  const current = await getSessionVersion(ctx.pool, user.userId);
  if (!current || current.tenantId !== user.tenantId) throw new Error('portal session for an unknown user');
  const claims = { u: user.userId, t: user.tenantId, v: String(current.sessionVersion) };
  const token = await ctx.signer.sign('portal-session', claims, SESSION_TTL_SEC);
  res.cookie(SESSION_COOKIE, token, {
    httpOnly: true,
    sameSite: 'lax',
    secure: ctx.config.PUBLIC_BASE_URL.startsWith('https:'),
    maxAge: SESSION_TTL_SEC * 1000,
    path: '/',
  });
}

/** Signs the human out everywhere: every session of theirs ends, not only this browser's cookie. */
export async function endPortalSession(ctx: ServiceContext, req: Request, res: Response): Promise<void> {
  const human = await readPortalUser(ctx, req);
  if (human) await endUserSessions(ctx.pool, human.userId);
  res.clearCookie(SESSION_COOKIE, { path: '/' });
}
