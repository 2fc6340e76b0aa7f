import { type Request, type Response, Router } from 'express';
import type { ServiceContext } from '../../features/context.js';
import {
  addTenantUpstream,
  listTenantUpstreams,
  removeTenantUpstream,
  TENANT_UPSTREAM_MAX,
  TenantUpstreamRefused,
  type TenantUpstreamSummary,
} from '../../platform/database/tenant-upstream-servers.js';
import { loadCatalog } from '../../providers/remote-mcp/config.js';
import { tenantClientRedirectUri } from '../../providers/remote-mcp/tenant-client-redirect.js';
import { csrfToken, requireCsrf } from './csrf.js';
import { formBody } from './form-body.js';
import { html, messagePage, type SafeHtml } from './html.js';
import { noticeFor } from './notice.js';
import { portalPage } from './portal-page.js';
import { type SignedIn, signedInAdmin } from './signed-in.js';

/**
 * GET /portal/upstreams — an administrator's list of the organisation's own upstream MCP servers
 * (integrations only its people see), with a form to add one (a catalog entry from the list, or a
 * JSON entry) and a remove button per server. Administrators only: anyone else gets 403. Every
 * change is a CSRF-checked POST (and passes the portal's same-origin check) that redirects back.
 */

const PATH = '/portal/upstreams';
/** What a redirect back may announce; only these fixed texts, never anything from the request. */
const NOTICES: Record<string, string> = {
  added: 'The server was added. Its tools appear in search once it has been listed.',
  removed: 'The server was removed.',
};

const FORBIDDEN = messagePage('Administrators only', "Only an administrator manages the organisation's upstream servers.", 'bad');

function serverRow(ctx: ServiceContext, csrf: string, server: TenantUpstreamSummary): SafeHtml {
  const entry = server.entry as { displayName?: string; url?: string; document?: string; auth?: { type?: string } };
  const redirectUri = tenantClientRedirectUri(ctx.config, server.entry);
  return html`<tr data-upstream="${server.name}"><td><strong>${entry.displayName ?? server.name}</strong> <code>${server.name}</code></td>
<td><code>${entry.url ?? entry.document ?? ''}</code>${entry.document ? html` <span class="muted">(OpenAPI)</span>` : ''}</td><td>${entry.auth?.type ?? 'none'}${
    redirectUri ? html`<br><span class="muted">its client's redirect URI:</span> <code data-redirect-uri>${redirectUri}</code>` : ''
  }</td>
<td class="actions"><form method="post" action="${PATH}/${encodeURIComponent(server.name)}/remove" class="inline">
<input type="hidden" name="_csrf" value="${csrf}"><button type="submit" class="small danger">Remove</button></form></td></tr>`;
}

/** Whether a catalog entry would be accepted now (the same check as adding it; nothing is stored or sent). */
function addable(ctx: ServiceContext, name: string): boolean {
  try {
    ctx.registry.tenantEntry(name);
    return true;
  } catch {
    return false;
  }
}

async function upstreamsPage(
  ctx: ServiceContext,
  req: Request,
  me: SignedIn,
  flash: { notice?: string; error?: string; entry?: string } = {},
) {
  const csrf = csrfToken(ctx, req);
  const servers = await listTenantUpstreams(ctx.pool, me.caller.tenantId);
  const own = new Set(servers.map((s) => s.name));
  // Catalog entries the deployment already offers (or the organisation added), or this build cannot serve, are not offered.
  const offered = loadCatalog().filter((e) => !own.has(e.name) && addable(ctx, e.name));
  const list = servers.length
    ? html`<table><thead><tr><th>Server</th><th>URL</th><th>Auth</th><th>Actions</th></tr></thead><tbody>${servers.map((s) => serverRow(ctx, csrf, s))}</tbody></table>`
    : html`<div class="box"><p>The organisation has no upstream servers of its own yet.</p></div>`;
  return portalPage(
    'Upstream servers',
    me,
    'upstreams',
    html`<h1>Upstream MCP servers</h1>
${flash.notice ? html`<div class="box ok" role="status"><p>${flash.notice}</p></div>` : ''}${
  flash.error ? html`<div class="box bad" role="alert"><p class="error">${flash.error}</p></div>` : ''
}
<p class="muted">Remote MCP servers your organisation adds become integrations that only its people see: their tools are searched and called like any other, under your policy. At most ${TENANT_UPSTREAM_MAX}.</p>
${list}
<h2>Add a server</h2>
<form method="post" action="${PATH}" class="box"><input type="hidden" name="_csrf" value="${csrf}">
<label for="catalog">From the catalog</label>
<select id="catalog" name="catalog"><option value="">(choose, or write an entry below)</option>${offered.map(
      (e) => html`<option value="${e.name}">${e.displayName} (${e.name})</option>`,
    )}</select>
<label for="entry">Or a JSON entry</label>
<textarea id="entry" name="entry" rows="7" cols="70" spellcheck="false" placeholder='{"name": "acme", "displayName": "Acme", "url": "https://mcp.acme.example/mcp", "auth": {"type": "none"}}'>${flash.entry ?? ''}</textarea>
<p class="muted">The same shape as the operator's <code>UPSTREAM_MCP_SERVERS</code> entries, or an OpenAPI integration: an <code>OPENAPI_INTEGRATIONS</code> entry with <code>"kind": "openapi"</code> and the https URL of its document (fetched once, now). The name may not be one of the deployment's integrations.</p>
<button type="submit">Add server</button></form>
<p><a href="/portal/upstreams/registry">Find a server in the MCP Registry</a></p>`,
  );
}

export function upstreamsRouter(ctx: ServiceContext): Router {
  const router = Router();

  /** The signed-in administrator, or undefined with the answer sent (sign-in, or 403). */
  const admin = (req: Request, res: Response) => signedInAdmin(ctx, req, res, PATH, FORBIDDEN);

  router.get(PATH, async (req: Request, res: Response) => {
    const me = await admin(req, res);
    if (!me) return;
    const notice = noticeFor(NOTICES, req.query.done);
    res.send(await upstreamsPage(ctx, req, me, { notice }));
  });

  router.post(PATH, formBody, requireCsrf(ctx), async (req: Request, res: Response) => {
    const me = await admin(req, res);
    if (!me) return;
    const catalog = typeof req.body?.catalog === 'string' ? req.body.catalog.trim() : '';
    const text = typeof req.body?.entry === 'string' ? req.body.entry.trim() : '';
    const refuse = async (error: string) => res.status(400).send(await upstreamsPage(ctx, req, me, { error, entry: text }));
    if (catalog && text) return refuse('Choose a catalog entry or write a JSON entry, not both.');
    if (!catalog && !text) return refuse('Choose a catalog entry or write a JSON entry.');
    let addition: Awaited<ReturnType<ServiceContext['registry']['tenantAddition']>>;
    try {
      addition = await ctx.registry.tenantAddition(catalog || text);
    } catch (err) {
      return refuse(`Not added: ${(err as Error).message}.`);
    }
    const { entry } = addition;
    try {
      await addTenantUpstream(ctx.pool, ctx.keyring, { tenantId: me.caller.tenantId, createdBy: me.user.id, ...addition });
    } catch (err) {
      if (err instanceof TenantUpstreamRefused) return refuse(`Not added: ${err.message}.`);
      throw err;
    }
    ctx.registry.forgetTenant(me.caller.tenantId);
    ctx.logger.info({ tenantId: me.caller.tenantId, integration: entry.name, userId: me.user.id }, 'tenant upstream server added');
    res.redirect(303, `${PATH}?done=added`);
  });

  router.post(`${PATH}/:name/remove`, formBody, requireCsrf(ctx), async (req: Request, res: Response) => {
    const me = await admin(req, res);
    if (!me) return;
    const name = String(req.params.name);
    // Scoped by the administrator's own tenant: another tenant's server of the same name is untouched.
    if (!(await removeTenantUpstream(ctx.pool, me.caller.tenantId, name))) {
      return res.status(404).send(messagePage('No such server', 'Your organisation has no upstream server of this name.', 'bad'));
    }
    ctx.registry.forgetTenant(me.caller.tenantId);
    ctx.logger.info({ tenantId: me.caller.tenantId, integration: name, userId: me.user.id }, 'tenant upstream server removed');
    res.redirect(303, `${PATH}?done=removed`);
  });

  return router;
}
