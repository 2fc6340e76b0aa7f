import { type Request, type Response, Router } from 'express';
import {
  comparableToolName,
  type TenantSettings,
  TOOL_OVERRIDE_MODES,
  TOOL_OVERRIDE_PATTERN_MAX_CHARS,
  TOOL_OVERRIDES_MAX,
  type ToolOverride,
  tenantSettingsSchema,
} from '../../core/policy.js';
import { changeTenantSettings, getTenant } from '../../features/accounts/store/tenants.js';
import type { ServiceContext } from '../../features/context.js';
import { recordSettingsChange } from '../../features/execution/store/audit.js';
import { csrfToken, requireCsrf } from './csrf.js';
import { formBody } from './form-body.js';
import { html, messagePage, type SafeHtml } from './html.js';
import { noticeFor } from './notice.js';
import { portalPage } from './portal-page.js';
import { type SignedIn, signedInAdmin } from './signed-in.js';

/**
 * GET /portal/tool-overrides — an administrator's per-tool overrides of approval and access
 * (core/tool-overrides.ts), with a form to add or change one and a remove button per override.
 * Administrators only, of their own organisation (the tenant is the session's, never the form's):
 * anyone else gets 403. Every change is a CSRF-checked POST (and passes the portal's same-origin
 * check), validated like the admin CLI's `--tool-overrides`, and written to the audit log.
 */

const PATH = '/portal/tool-overrides';
const NOTICES: Record<string, string> = {
  saved: 'The override was saved. It applies to the next search and call.',
  removed: 'The override was removed.',
};
const FORBIDDEN = messagePage('Administrators only', "Only an administrator changes the organisation's tool overrides.", 'bad');

const MODE_TEXT: Record<ToolOverride['mode'], string> = {
  'never-ask': 'never ask for approval',
  'always-ask': 'always ask for approval',
  'read-only': 'treat as read-only',
};

class OverrideRefused extends Error {}

/** The settings with `overrides`, or OverrideRefused naming the field that is wrong. */
function validated(settings: TenantSettings, overrides: ToolOverride[]): TenantSettings {
  const result = tenantSettingsSchema.safeParse({ ...settings, toolOverrides: overrides });
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const field = issue.path[0] === 'toolOverrides' && issue.path.length > 2 ? `${String(issue.path[2])}: ` : '';
  throw new OverrideRefused(`${field}${issue.message}`);
}

function overrideRow(csrf: string, o: ToolOverride): SafeHtml {
  return html`<tr data-override="${o.pattern}"><td><code>${o.pattern}</code></td><td data-mode="${o.mode}">${MODE_TEXT[o.mode]}</td>
<td class="actions"><form method="post" action="${PATH}/remove" class="inline"><input type="hidden" name="_csrf" value="${csrf}">
<input type="hidden" name="pattern" value="${o.pattern}"><button type="submit" class="small danger">Remove</button></form></td></tr>`;
}

async function overridesPage(ctx: ServiceContext, req: Request, me: SignedIn, flash: { notice?: string; error?: string } = {}) {
  const csrf = csrfToken(ctx, req);
  const overrides = (await getTenant(ctx.pool, me.caller.tenantId))?.settings.toolOverrides ?? [];
  return portalPage(
    'Tool overrides',
    me,
    'approvals',
    html`<h1>Tool overrides</h1>
${flash.notice ? html`<div class="box ok" role="status"><p>${flash.notice}</p></div>` : ''}${
  flash.error ? html`<div class="box bad" role="alert"><p class="error">${flash.error}</p></div>` : ''
}
<p class="muted">What a tool's server says about it (read, write, destructive) decides whether its calls wait for approval. An override
decides instead, for your organisation: by pattern over qualified tool names as search shows them (<code>notion_api_post_search</code>,
<code>playwright_browser_*</code>; <code>*</code> matches any run of characters). The most specific matching pattern decides.
Read-only also makes the tool count as reading everywhere else. At most ${TOOL_OVERRIDES_MAX}.</p>
${
  overrides.length
    ? html`<table><thead><tr><th>Pattern</th><th>Override</th><th></th></tr></thead><tbody>${overrides.map((o) => overrideRow(csrf, o))}</tbody></table>`
    : html`<div class="box"><p>No tool overrides: every tool follows what its server says.</p></div>`
}
<h2>Add or change an override</h2>
<form method="post" action="${PATH}" class="box"><input type="hidden" name="_csrf" value="${csrf}">
<label for="pattern">Pattern</label>
<div class="field"><input type="text" id="pattern" name="pattern" maxlength="${TOOL_OVERRIDE_PATTERN_MAX_CHARS}" required spellcheck="false" placeholder="playwright_browser_*"></div>
<label for="mode">Override</label>
<select id="mode" name="mode">${TOOL_OVERRIDE_MODES.map((m) => html`<option value="${m}">${MODE_TEXT[m]}</option>`)}</select>
<p><button type="submit">Save override</button></p></form>
<p><a href="/portal/approvals">Approvals</a></p>`,
  );
}

export function toolOverridesRouter(ctx: ServiceContext): Router {
  const router = Router();
  const admin = (req: Request, res: Response) => signedInAdmin(ctx, req, res, PATH, FORBIDDEN);

  /** Stores the change (under the settings lock), audits it and sends the administrator back; a refused one re-shows the page. */
  async function change(req: Request, res: Response, me: SignedIn, next: (current: ToolOverride[]) => ToolOverride[], done: string) {
    let overrides: ToolOverride[] | undefined;
    try {
      await changeTenantSettings(ctx.pool, me.caller.tenantId, (settings) => {
        overrides = next(settings.toolOverrides ?? []);
        return validated(settings, overrides);
      });
    } catch (err) {
      if (!(err instanceof OverrideRefused)) throw err;
      return res.status(400).send(await overridesPage(ctx, req, me, { error: `Not saved: ${err.message}.` }));
    }
    await recordSettingsChange(ctx.pool, { tenantId: me.caller.tenantId, actorUserId: me.user.id, detail: { toolOverrides: overrides } });
    ctx.logger.info({ tenantId: me.caller.tenantId, userId: me.user.id }, 'tenant tool overrides changed');
    res.redirect(303, `${PATH}?done=${done}`);
  }

  router.get(PATH, async (req: Request, res: Response) => {
    const me = await admin(req, res);
    if (!me) return;
    res.send(await overridesPage(ctx, req, me, { notice: noticeFor(NOTICES, req.query.done) }));
  });

  router.post(PATH, formBody, requireCsrf(ctx), async (req: Request, res: Response) => {
    const me = await admin(req, res);
    if (!me) return;
    const pattern = typeof req.body?.pattern === 'string' ? req.body.pattern.trim() : '';
    const mode = (typeof req.body?.mode === 'string' ? req.body.mode : '') as ToolOverride['mode'];
    const key = comparableToolName(pattern);
    // A pattern already listed changes its mode where it stands.
    await change(
      req,
      res,
      me,
      (current) =>
        current.some((o) => comparableToolName(o.pattern) === key)
          ? current.map((o) => (comparableToolName(o.pattern) === key ? { pattern, mode } : o))
          : [...current, { pattern, mode }],
      'saved',
    );
  });

  router.post(`${PATH}/remove`, formBody, requireCsrf(ctx), async (req: Request, res: Response) => {
    const me = await admin(req, res);
    if (!me) return;
    const pattern = typeof req.body?.pattern === 'string' ? req.body.pattern : '';
    await change(req, res, me, (current) => current.filter((o) => o.pattern !== pattern), 'removed');
  });

  return router;
}
