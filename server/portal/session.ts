import type { Request, Response } from 'express';
import type { ServiceContext } from '../context.js';

/** The signed-in human of the portal, kept in a signed HttpOnly cookie. */
export interface PortalUser {
  userId: string;
  tenantId: string;
}

export const SESSION_COOKIE = 'sb_session';
const SESSION_TTL_SEC = 12 * 3600;

export async function readPortalUser(ctx: ServiceContext, req: Request): Promise<PortalUser | undefined> {
  const token = req.cookies?.[SESSION_COOKIE];
  if (typeof token !== 'string') return undefined;
  const claims = await ctx.signer.verify('portal-session', token);
  if (!claims || typeof claims.u !== 'string' || typeof claims.t !== 'string') return undefined;
  return { userId: claims.u, tenantId: claims.t };
}

export async function startPortalSession(ctx: ServiceContext, res: Response, user: PortalUser): Promise<void> {
  const token = await ctx.signer.sign('portal-session', { u: user.userId, t: user.tenantId }, SESSION_TTL_SEC);
  res.cookie(SESSION_COOKIE, token, {
    httpOnly: true,
    sameSite: 'lax',
    secure: ctx.config.PUBLIC_BASE_URL.startsWith('https:'),
    maxAge: SESSION_TTL_SEC * 1000,
    path: '/',
  });
}

export function endPortalSession(res: Response): void {
  res.clearCookie(SESSION_COOKIE, { path: '/' });
}
