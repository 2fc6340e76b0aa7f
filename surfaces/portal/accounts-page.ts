import { type Request, type Response, Router } from 'express';
import { z } from 'zod';
import { ACCOUNT_LABEL_MAX_CHARS, accountLabelSchema } from '../../core/account-label.js';
import { roleNameSchema } from '../../core/policy.js';
import {
  type Account,
  getAccount,
  listTenantAccounts,
  listUsableAccounts,
  renameAccount,
  setDefaultAccount,
  setSharingRoles,
} from '../../features/accounts/store/accounts.js';
import { disconnectAccount } from '../../features/connections/disconnect.js';
import { forTenant } from '../../features/connections/services.js';
import type { ServiceContext } from '../../features/context.js';
import { FOR_ORGANISATION, integrationPath } from './connect-controls.js';
import { csrfToken, requireCsrf } from './csrf.js';
import { formBody } from './form-body.js';
import { html, messagePage, type SafeHtml } from './html.js';
import { noticeFor } from './notice.js';
import { portalPage } from './portal-page.js';
import { mayManage, type SignedIn, signedIn, signedInPage, toSignIn } from './signed-in.js';

/**
 * GET /portal/accounts — the accounts a user can use (their own, then the organisation's shared
 * with one of their roles) with rename, make-default and disconnect for their own; an
 * administrator also manages every organisation account: rename, default, sharing roles,
 * delete. Every change is a CSRF-checked POST that redirects back (post/redirect/get).
 */

const MAX_SHARING_ROLES = 50;

const sharingRole = z.literal('*').or(roleNameSchema);

/** What a redirect back may announce; only these fixed texts, never anything from the request. */
const NOTICES: Record<string, string> = {
  renamed: 'The account was renamed.',
  default: 'The default account was changed.',
  disconnected: 'The account was disconnected.',
  revoked: 'The account was disconnected and its access revoked at the service.',
  shared: 'The sharing roles were saved.',
};

function statusTag(a: Account): SafeHtml {
  if (!a.hasCredential) return html`<span class="tag bad">No credential yet</span>`;
  return a.status === 'active' ? html`<span class="tag ok">Active</span>` : html`<span class="tag bad">Needs reconnecting</span>`;
}

function integrationCell(ctx: ServiceContext, a: Account): SafeHtml {
  const provider = ctx.registry.get(a.integration);
  return html`<td>${provider?.manifest.displayName ?? a.integration} <code>${a.integration}</code></td>`;
}

const action = (a: Account, what: string) => `/portal/accounts/${encodeURIComponent(a.id)}/${what}`;

function renameForm(csrf: string, a: Account): SafeHtml {
  return html`<form method="post" action="${action(a, 'label')}" class="inline">
<input type="hidden" name="_csrf" value="${csrf}"><input type="text" name="label" value="${a.label}" maxlength="${ACCOUNT_LABEL_MAX_CHARS}" required aria-label="Label of ${a.label}">
<button type="submit" class="small secondary">Rename</button></form>`;
}

function buttonForm(csrf: string, a: Account, what: string, text: string, kind = 'secondary'): SafeHtml {
  return html`<form method="post" action="${action(a, what)}" class="inline"><input type="hidden" name="_csrf" value="${csrf}">
<button type="submit" class="small ${kind}">${text}</button></form>`;
}

function manageActions(ctx: ServiceContext, csrf: string, a: Account): SafeHtml {
  const provider = ctx.registry.get(a.integration);
  const needsKey = provider?.manifest.auth === 'apikey';
  return html`<td class="actions">${a.isDefault ? '' : buttonForm(csrf, a, 'default', 'Make default')} ${
    needsKey
      ? html`<a class="button small secondary" href="${integrationPath(a.integration)}?account=${a.id}">${a.hasCredential ? 'Replace key' : 'Add key'}</a>`
      : ''
  } ${buttonForm(csrf, a, 'disconnect', a.scope === 'tenant' ? 'Delete' : 'Disconnect', 'danger')}</td>`;
}

async function accountsPage(base: ServiceContext, req: Request, me: SignedIn, flash: { notice?: string; error?: string } = {}) {
  const ctx = await forTenant(base, me.caller.tenantId);
  const csrf = csrfToken(ctx, req);
  const usable = await listUsableAccounts(ctx.pool, me.caller);
  const rows = usable.map((a) => {
    const own = a.scope === 'user';
    return html`<tr data-account="${a.id}">${integrationCell(ctx, a)}
<td>${own ? renameForm(csrf, a) : html`<strong>${a.label}</strong>`}</td>
<td>${own ? 'Yours' : 'Organisation'}</td><td>${a.isDefault ? html`<span class="tag">Default</span>` : ''}</td><td>${statusTag(a)}</td>
${own ? manageActions(ctx, csrf, a) : html`<td class="muted">Managed by an administrator</td>`}</tr>`;
  });
  const mine = rows.length
    ? html`<table><thead><tr><th>Integration</th><th>Label</th><th>Scope</th><th>Default</th><th>Status</th><th>Actions</th></tr></thead>
<tbody>${rows}</tbody></table>`
    : html`<div class="box"><p>You have no accounts yet. <a href="/portal/integrations">Connect an integration</a>.</p></div>`;

  let admin: SafeHtml = html``;
  if (me.isAdmin) {
    const org = await listTenantAccounts(ctx.pool, me.caller.tenantId);
    const orgRows = org.map(
      (a) => html`<tr data-org-account="${a.id}">${integrationCell(ctx, a)}<td>${renameForm(csrf, a)}</td>
<td>${a.isDefault ? html`<span class="tag">Default</span>` : ''}</td>
<td><form method="post" action="${action(a, 'sharing')}" class="inline"><input type="hidden" name="_csrf" value="${csrf}">
<input type="text" name="roles" value="${a.sharingRoles.join(', ')}" placeholder="nobody" size="14" aria-label="Roles that may use ${a.label}">
<button type="submit" class="small secondary">Share</button></form></td><td>${statusTag(a)}</td>${manageActions(ctx, csrf, a)}</tr>`,
    );
    admin = html`<h2>Organisation accounts</h2>
<p class="muted">As an administrator you manage every organisation account. Members may use one when one of their roles is in its sharing roles
(comma-separated; <code>*</code> is everyone; empty is nobody).</p>
${
  orgRows.length
    ? html`<table><thead><tr><th>Integration</th><th>Label</th><th>Default</th><th>Shared with roles</th><th>Status</th><th>Actions</th></tr></thead>
<tbody>${orgRows}</tbody></table>`
    : html`<div class="box"><p>The organisation has no accounts yet.</p></div>`
}
<p><a class="button secondary" href="/portal/integrations#${FOR_ORGANISATION}">Add an organisation account</a></p>`;
  }

  return portalPage(
    'Accounts',
    me,
    'accounts',
    html`<h1>Accounts</h1>
${flash.notice ? html`<div class="box ok" role="status"><p>${flash.notice}</p></div>` : ''}${
  flash.error ? html`<div class="box bad" role="alert"><p class="error">${flash.error}</p></div>` : ''
}
<p class="muted">The accounts your agents can use: your own first, then the organisation's shared with you. Without naming an account, an agent uses your default, else the organisation's default.</p>
${mine}${admin}`,
  );
}

export function accountsRouter(ctx: ServiceContext): Router {
  const router = Router();

  router.get(
    '/portal/accounts',
    signedInPage(ctx, async (req, res, me) => {
      const notice = noticeFor(NOTICES, req.query.done);
      res.send(await accountsPage(ctx, req, me, { notice }));
    }),
  );

  /** The account named in the path, if the signed-in user may manage it (own, or organisation's for an admin). */
  async function manageable(req: Request, res: Response): Promise<{ me: SignedIn; account: Account } | undefined> {
    const me = await signedIn(ctx, req);
    if (!me) {
      toSignIn(res, '/portal/accounts');
      return undefined;
    }
    const account = await getAccount(ctx.pool, me.caller.tenantId, String(req.params.id));
    if (!account || !mayManage(me, account)) {
      res.status(404).send(messagePage('No such account', 'There is no account with this id that you may change.', 'bad'));
      return undefined;
    }
    return { me, account };
  }

  const back = (res: Response, done: keyof typeof NOTICES) => res.redirect(303, `/portal/accounts?done=${done}`);
  const refuse = async (req: Request, res: Response, me: SignedIn, error: string) =>
    res.status(400).send(await accountsPage(ctx, req, me, { error }));

  router.post('/portal/accounts/:id/label', formBody, requireCsrf(ctx), async (req: Request, res: Response) => {
    const found = await manageable(req, res);
    if (!found) return;
    const label = accountLabelSchema.safeParse(req.body?.label ?? '');
    if (!label.success) return refuse(req, res, found.me, label.error.issues[0].message);
    await renameAccount(ctx.pool, found.account.tenantId, found.account.id, label.data);
    back(res, 'renamed');
  });

  router.post('/portal/accounts/:id/default', formBody, requireCsrf(ctx), async (req: Request, res: Response) => {
    const found = await manageable(req, res);
    if (!found) return;
    await setDefaultAccount(ctx.pool, found.account.tenantId, found.account.id);
    back(res, 'default');
  });

  router.post('/portal/accounts/:id/disconnect', formBody, requireCsrf(ctx), async (req: Request, res: Response) => {
    const found = await manageable(req, res);
    if (!found) return;
    const { revoked } = await disconnectAccount(ctx, found.account);
    ctx.logger.info({ accountId: found.account.id, integration: found.account.integration, revoked }, 'account disconnected in the portal');
    back(res, revoked ? 'revoked' : 'disconnected');
  });

  router.post('/portal/accounts/:id/sharing', formBody, requireCsrf(ctx), async (req: Request, res: Response) => {
    const found = await manageable(req, res);
    if (!found) return;
    if (found.account.scope !== 'tenant') return refuse(req, res, found.me, 'Only organisation accounts are shared.');
    const text: string = typeof req.body?.roles === 'string' ? req.body.roles : '';
    const roles = [...new Set(text.split(/[\s,]+/).filter(Boolean))];
    const bad = roles.filter((r) => !sharingRole.safeParse(r).success);
    if (bad.length) {
      return refuse(req, res, found.me, `Not a role name: ${bad.join(', ')}. Use letters, digits, _, -, . and : (or * for everyone).`);
    }
    if (roles.length > MAX_SHARING_ROLES) return refuse(req, res, found.me, `At most ${MAX_SHARING_ROLES} roles.`);
    await setSharingRoles(ctx.pool, found.account.tenantId, found.account.id, roles);
    back(res, 'shared');
  });

  return router;
}
