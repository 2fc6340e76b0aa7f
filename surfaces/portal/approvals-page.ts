import { type Request, type Response, Router } from 'express';
import {
  APPROVE_DESTRUCTIVE_DEFAULT,
  approvalTtlSec,
  approverRoles,
  approvesForOthers,
  mayApprove,
  orgApproverRoles,
  SELF_APPROVER,
} from '../../core/approval-policy.js';
import type { TenantSettings } from '../../core/policy.js';
import { getUser } from '../../features/accounts/store/users.js';
import { approvalFor, decide } from '../../features/approvals/decide.js';
import {
  APPROVAL_REASON_MAX_CHARS,
  type Approval,
  listPendingApprovals,
  readShownArguments,
} from '../../features/approvals/store/approvals.js';
import { tenantSettings } from '../../features/catalog/caller-tenant.js';
import type { ServiceContext } from '../../features/context.js';
import { csrfToken, requireCsrf } from './csrf.js';
import { formBody } from './form-body.js';
import { html, messagePage, type SafeHtml } from './html.js';
import { noticeFor } from './notice.js';
import { portalPage } from './portal-page.js';
import { type SignedIn, signedIn, signedInPage, toSignIn } from './signed-in.js';

/**
 * GET /portal/approvals — the calls waiting for the signed-in person's decision: their own (when
 * the tenant lets callers approve their own calls) and, for an approver role, the organisation's.
 * GET /portal/approvals/:id — exactly what will run (the summary: secrets redacted, long values
 * cut), with Approve and Deny and an optional reason. POST /portal/approvals/:id decides
 * (CSRF-checked; features/approvals/decide.ts). An approval the person may not decide answers exactly like
 * one that does not exist.
 */

const NOTICES: Record<string, string> = {
  approved: 'Approved. The call runs now, once; the agent gets its result.',
  denied: 'Denied. The call will not run.',
  already: 'This approval was already decided (or expired); your decision changed nothing.',
};

const unknownPage = () => messagePage('No such approval', 'There is no approval with this id that you may decide.', 'bad');

const approvalPath = (a: Pick<Approval, 'id'>) => `/portal/approvals/${encodeURIComponent(a.id)}`;

function policyBox(settings: TenantSettings, isAdmin: boolean): SafeHtml {
  const who = (list: readonly string[]) => list.map((r) => (r === SELF_APPROVER ? 'the caller themself' : `role ${r}`)).join(', ');
  const roles = who(approverRoles(settings));
  const orgRoles = settings.orgApproverRoles ? who(orgApproverRoles(settings)) : undefined;
  const destructive = settings.approveDestructive ?? APPROVE_DESTRUCTIVE_DEFAULT;
  const tools = settings.approvalTools?.length ? settings.approvalTools : [];
  const hours = Math.round((approvalTtlSec(settings) / 3600) * 10) / 10;
  const overrides = settings.toolOverrides ?? [];
  return html`<div class="box" data-approval-policy><p class="muted">Your organisation's approval settings:
${destructive ? 'every destructive tool' : 'no tool for being destructive'}${tools.length ? html` and tools matching <code>${tools.join(', ')}</code>` : ''}
wait for approval; approved by ${roles}${orgRoles ? html` (on organisation accounts: ${orgRoles})` : ''}; an approval expires after ${hours} h.</p>
${overrides.length ? html`<p class="muted" data-tool-overrides>Tool overrides: ${overrides.map((o, i) => html`${i ? ', ' : ''}<code>${o.pattern}</code> ${o.mode}`)}.</p>` : ''}
${isAdmin ? html`<p><a href="/portal/tool-overrides">Tool overrides</a> (administrators): never ask, always ask or treat as read-only, by tool.</p>` : ''}</div>`;
}

function statusTag(a: Approval): SafeHtml {
  if (a.status === 'PENDING')
    return a.expiresAt.getTime() > Date.now() ? html`<span class="tag">Pending</span>` : html`<span class="tag bad">Expired</span>`;
  const ok = a.status === 'APPROVED' || a.status === 'RUNNING' || a.status === 'DONE';
  const text = {
    APPROVED: 'Approved',
    RUNNING: 'Approved, running',
    DONE: 'Approved, ran',
    DENIED: 'Denied',
    EXPIRED: 'Expired',
    CANCELLED: 'Cancelled',
  }[a.status];
  return html`<span class="tag ${ok ? 'ok' : 'bad'}" data-status="${a.status}">${text}</span>`;
}

async function emailOf(ctx: ServiceContext, userId: string | null): Promise<string> {
  if (!userId) return '';
  return (await getUser(ctx.pool, userId))?.email ?? userId;
}

async function listPage(ctx: ServiceContext, me: SignedIn): Promise<string> {
  const settings = await tenantSettings(ctx, me.caller);
  const forOthers = approvesForOthers(settings, me.user.roles);
  const pending = (await listPendingApprovals(ctx.pool, me.caller.tenantId, forOthers ? undefined : me.user.id)).filter((a) =>
    mayApprove(settings, a, me.caller),
  );
  const rows = await Promise.all(
    pending.map(
      async (a) => html`<tr data-approval="${a.id}"><td><code>${a.tool}</code></td><td>${a.accountLabel ?? 'built-in'}</td>
<td>${a.requesterUserId === me.user.id ? 'You' : await emailOf(ctx, a.requesterUserId)}</td><td>${a.createdAt.toISOString()}</td>
<td><a class="button small" href="${approvalPath(a)}">Review</a></td></tr>`,
    ),
  );
  return portalPage(
    'Approvals',
    me,
    'approvals',
    html`<h1>Approvals</h1>
<p class="muted">Calls an agent made that wait for a person's approval before they run${forOthers ? html`: yours and your organisation's` : ''}.</p>
${policyBox(settings, me.isAdmin)}
${
  rows.length
    ? html`<table><thead><tr><th>Tool</th><th>Account</th><th>Asked by</th><th>Asked at</th><th></th></tr></thead><tbody>${rows}</tbody></table>`
    : html`<div class="box"><p>Nothing waits for your approval.</p></div>`
}`,
  );
}

async function detailPage(ctx: ServiceContext, req: Request, me: SignedIn, a: Approval, notice?: string): Promise<string> {
  const open = a.status === 'PENDING' && a.expiresAt.getTime() > Date.now();
  const csrf = csrfToken(ctx, req);
  const decidedBy = await emailOf(ctx, a.decidedBy);
  return portalPage(
    'Approve a call',
    me,
    'approvals',
    html`<h1>Approve a call</h1>
${notice ? html`<div class="box ok" role="status"><p>${notice}</p></div>` : ''}
<table data-summary><tbody>
<tr><th>Tool</th><td><code data-tool>${a.summary.tool}</code></td></tr>
<tr><th>Account</th><td data-account>${a.summary.account ?? 'built-in (no account)'}</td></tr>
<tr><th>Whose</th><td data-account-scope>${a.accountScope === 'tenant' ? "the organisation's account" : a.summary.account ? "the requester's own account" : '—'}</td></tr>
<tr><th>Asked by</th><td>${a.requesterUserId === me.user.id ? 'You (through your agent)' : await emailOf(ctx, a.requesterUserId)}</td></tr>
<tr><th>Arguments</th><td><pre data-arguments>${JSON.stringify(await readShownArguments(ctx.pool, a.id), null, 2)}</pre></td></tr>
<tr><th>Status</th><td>${statusTag(a)}${
      a.decidedAt ? html` by ${decidedBy} at ${a.decidedAt.toISOString()}${a.reason ? html` — <q data-reason>${a.reason}</q>` : ''}` : ''
    }</td></tr>
<tr><th>Expires</th><td>${a.expiresAt.toISOString()}</td></tr>
</tbody></table>
${
  open
    ? html`<form method="post" action="${approvalPath(a)}" data-decide>
<input type="hidden" name="_csrf" value="${csrf}">
<label for="reason">Reason (optional)</label>
<div class="field"><input type="text" id="reason" name="reason" maxlength="${APPROVAL_REASON_MAX_CHARS}"></div>
<p><button type="submit" name="decision" value="approve">Approve</button> <button type="submit" name="decision" value="deny" class="danger">Deny</button></p>
<p class="muted">Approving runs the call above once, as the person who asked, on the account shown.</p></form>`
    : ''
}
<p><a href="/portal/approvals">All approvals</a></p>`,
  );
}

export function approvalsRouter(ctx: ServiceContext): Router {
  const router = Router();

  router.get(
    '/portal/approvals',
    signedInPage(ctx, async (_req, res, me) => {
      res.send(await listPage(ctx, me));
    }),
  );

  router.get(
    '/portal/approvals/:id',
    signedInPage(ctx, async (req, res, me) => {
      const approval = await approvalFor(ctx, me.caller, String(req.params.id));
      if (!approval) return res.status(404).send(unknownPage());
      const notice = noticeFor(NOTICES, req.query.done);
      res.send(await detailPage(ctx, req, me, approval, notice));
    }),
  );

  router.post('/portal/approvals/:id', formBody, requireCsrf(ctx), async (req: Request, res: Response) => {
    const id = String(req.params.id);
    const me = await signedIn(ctx, req);
    if (!me) return toSignIn(res, `/portal/approvals/${encodeURIComponent(id)}`);
    const decision = req.body?.decision === 'approve' ? 'APPROVED' : req.body?.decision === 'deny' ? 'DENIED' : undefined;
    if (!decision) return res.status(400).send(messagePage('Bad request', 'Choose Approve or Deny.', 'bad'));
    const reason = typeof req.body?.reason === 'string' ? req.body.reason : '';
    const decided = await decide(ctx, me.caller, id, decision, reason);
    if (decided.result === 'unknown') return res.status(404).send(unknownPage());
    const done = decided.result === 'already-decided' ? 'already' : decision === 'APPROVED' ? 'approved' : 'denied';
    res.redirect(303, `${approvalPath(decided.approval)}?done=${done}`);
  });

  return router;
}
