import { randomBytes } from 'node:crypto';
import type { Request, Response } from 'express';
import type { Account } from '../../features/accounts/store/accounts.js';
import { type Binding, bindBrowser, isBoundBrowser } from '../../features/connections/browser-binding.js';
import { WRONG_ACCOUNT } from '../../features/connections/flow-owner.js';
import type { ServiceContext } from '../../features/context.js';
import type { Provider } from '../../providers/sdk/index.js';
import { integrationPath } from './connect-controls.js';
import type { SignedIn } from './signed-in.js';

/**
 * The API-key form's binding: a form can be submitted for FORM_TTL_SEC, by the user it was
 * rendered for, from the browser that opened it, for the account it names. Opening the form sets
 * a cookie (sent only to the form's path) holding a MAC of tenant, user, integration, target and a
 * nonce the form carries; a submission without the matching cookie saves nothing. Opening the form
 * again replaces the cookie (the newest form of an integration wins).
 */

/** How long a rendered form can be submitted. */
const FORM_TTL_SEC = 30 * 60;

/** What the key is for: a new account of the user or the organisation, or an existing account. */
export type Target = { kind: 'new'; forOrg: boolean } | { kind: 'account'; account: Account };

/** The form's own token, `<nonce>.<expiry seconds>.<user id>`, carried in the hidden field `_form`. */
export interface FormToken {
  nonce: string;
  expires: number;
  userId: string;
}

export const formTokenText = (t: FormToken) => `${t.nonce}.${t.expires}.${t.userId}`;

function parseFormToken(raw: unknown): FormToken | undefined {
  const m = typeof raw === 'string' ? /^([\w-]{22})\.(\d{1,12})\.([\w-]{1,64})$/.exec(raw) : null;
  return m ? { nonce: m[1], expires: Number(m[2]), userId: m[3] } : undefined;
}

const targetKey = (target: Target) =>
  target.kind === 'account' ? `account:${target.account.id}` : target.forOrg ? 'organisation' : 'user';

/** The form's binding to this browser: its user, integration, target and nonce, under the form's path. */
export const formBinding = (me: SignedIn, provider: Provider, target: Target, nonce: string): Binding => ({
  purpose: 'apikey-form',
  name: 'sb_form',
  path: integrationPath(provider.manifest.name),
  subject: [me.caller.tenantId, me.user.id, provider.manifest.name, targetKey(target), nonce].join('\n'),
});

/** A fresh form token, with its binding cookie set on this response. */
export function issueForm(ctx: ServiceContext, res: Response, me: SignedIn, provider: Provider, target: Target): FormToken {
  const token = { nonce: randomBytes(16).toString('base64url'), expires: Math.floor(Date.now() / 1000) + FORM_TTL_SEC, userId: me.user.id };
  bindBrowser(ctx, res, formBinding(me, provider, target, token.nonce), FORM_TTL_SEC);
  return token;
}

/** Why this submission may not be saved (a page to answer), or the form token it came with. */
export function checkForm(
  ctx: ServiceContext,
  req: Request,
  me: SignedIn,
  provider: Provider,
  target: Target,
): { token: FormToken; refusal?: undefined } | { refusal: { status: number; title: string; message: string } } {
  const token = parseFormToken((req.body as Record<string, unknown> | undefined)?._form);
  const again = 'Nothing was saved. Open the page again and submit the key from there.';
  if (!token)
    return { refusal: { status: 400, title: 'Form not recognised', message: `This submission did not come from the form. ${again}` } };
  if (token.userId !== me.user.id) return { refusal: WRONG_ACCOUNT };
  if (token.expires <= Math.floor(Date.now() / 1000)) {
    return {
      refusal: { status: 410, title: 'Form expired', message: `This form was opened more than ${FORM_TTL_SEC / 60} minutes ago. ${again}` },
    };
  }
  if (!isBoundBrowser(ctx, req, formBinding(me, provider, target, token.nonce))) {
    return {
      refusal: {
        status: 403,
        title: 'Wrong browser',
        message: `This form was opened in another browser, for another account, or replaced by a newer one. ${again}`,
      },
    };
  }
  return { token };
}
