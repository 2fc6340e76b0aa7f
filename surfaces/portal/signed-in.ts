import type { Request, RequestHandler, Response } from 'express';
import type { Caller } from '../../core/caller.js';
import { ADMIN_ROLE } from '../../core/policy.js';
import type { Account } from '../../features/accounts/store/accounts.js';
import type { User } from '../../features/accounts/store/users.js';
import type { ServiceContext } from '../../features/context.js';
import { readSessionUser, type SessionClaims, sessionUserNow } from './session-cookie.js';

/** The human signed in to the portal, as the same Caller the API would see for their keys. */
export interface SignedIn {
  user: User;
  caller: Caller;
  /** Role `admin`: the organisation's administrator. */
  isAdmin: boolean;
}

/** The signed-in user, read fresh from the store (roles change); undefined when nobody is. */
export async function signedIn(ctx: ServiceContext, req: Request): Promise<SignedIn | undefined> {
  // One read: the session check already loads the user as stored now.
  return asSignedIn(await readSessionUser(ctx, req));
}

/** `signedIn` for claims already verified (signedSessionClaims): the store's half of the check. */
export async function signedInAs(ctx: ServiceContext, claims: SessionClaims): Promise<SignedIn | undefined> {
  return asSignedIn(await sessionUserNow(ctx, claims));
}

function asSignedIn(user: User | undefined): SignedIn | undefined {
  if (!user) return undefined;
  return { user, caller: { tenantId: user.tenantId, userId: user.id, roles: user.roles }, isAdmin: user.roles.includes(ADMIN_ROLE) };
}

/** Whether this human may change `account`: their own, or, as an administrator, one of the organisation's. */
export const mayManage = (me: SignedIn, account: Account): boolean =>
  account.scope === 'user' ? account.ownerUserId === me.user.id : me.isAdmin;

/**
 * The signed-in administrator of the organisation, or undefined with the answer sent: a signed-out
 * human signs in first (and comes back to `next`), anyone else gets 403 with `forbiddenPage`.
 */
export async function signedInAdmin(
  ctx: ServiceContext,
  req: Request,
  res: Response,
  next: string,
  forbiddenPage: string,
): Promise<SignedIn | undefined> {
  const me = await signedIn(ctx, req);
  if (!me) toSignIn(res, next);
  else if (!me.isAdmin) res.status(403).send(forbiddenPage);
  else return me;
  return undefined;
}

/** Sends a signed-out human to sign in, then back to `next` (a GET page). */
export function toSignIn(res: Response, next: string): void {
  res.redirect(303, `/portal/login?next=${encodeURIComponent(next)}`);
}

/** A GET page for signed-in humans: anyone else signs in first and comes back to it. */
export function signedInPage(ctx: ServiceContext, render: (req: Request, res: Response, me: SignedIn) => Promise<unknown>): RequestHandler {
  return async (req, res) => {
    const me = await signedIn(ctx, req);
    if (!me) return toSignIn(res, req.originalUrl);
    await render(req, res, me);
  };
}
