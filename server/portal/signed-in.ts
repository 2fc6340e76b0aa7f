import type { Request, Response } from 'express';
import type { Caller } from '../../core/caller.js';
import { ADMIN_ROLE } from '../../core/policy.js';
import type { User } from '../../store/users.js';
import type { ServiceContext } from '../context.js';
import { html, page, type SafeHtml } from './html.js';
import { readSessionUser } from './session.js';

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
  const user = await readSessionUser(ctx, req);
  if (!user) return undefined;
  return { user, caller: { tenantId: user.tenantId, userId: user.id, roles: user.roles }, isAdmin: user.roles.includes(ADMIN_ROLE) };
}

/** Sends a signed-out human to sign in, then back to `next` (a GET page). */
export function toSignIn(res: Response, next: string): void {
  res.redirect(303, `/portal/login?next=${encodeURIComponent(next)}`);
}

type Section = 'home' | 'integrations' | 'accounts';

/** A portal page with its navigation. Everything interpolated is escaped by `html`. */
export function portalPage(title: string, me: SignedIn, current: Section, body: SafeHtml): string {
  const link = (href: string, section: Section, text: string) =>
    section === current ? html`<a href="${href}" aria-current="page">${text}</a>` : html`<a href="${href}">${text}</a>`;
  return page(
    title,
    html`<nav aria-label="Portal">${link('/portal', 'home', 'Switchboard')}${link('/portal/integrations', 'integrations', 'Integrations')}${link(
      '/portal/accounts',
      'accounts',
      'Accounts',
    )}<span class="me">${me.user.email}${me.isAdmin ? ' · administrator' : ''}</span>
<form method="post" action="/portal/logout"><button type="submit" class="secondary small">Sign out</button></form></nav>${body}`,
    { wide: true },
  );
}
