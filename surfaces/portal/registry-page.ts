import { type Request, type Response, Router } from 'express';
import { InFlightLimit } from '../../core/in-flight-limit.js';
import type { ServiceContext } from '../../features/context.js';
import {
  MCP_REGISTRY_LIMITS,
  McpRegistryError,
  type RegistryServer,
  registryUpstreamEntry,
  searchMcpRegistry,
} from '../../providers/remote-mcp/mcp-registry.js';
import { csrfToken } from './csrf.js';
import { html, messagePage, type SafeHtml } from './html.js';
import { portalPage } from './portal-page.js';
import { type SignedIn, signedInAdmin } from './signed-in.js';

/**
 * GET /portal/upstreams/registry?q=… — an administrator searches the MCP Registry (MCP_REGISTRY_URL)
 * for remote MCP servers. Each server with a remote endpoint gets an Add button that posts the
 * entry made from it to the upstream servers page's own add (upstreams-page.ts), which checks it
 * as it checks an entry the administrator wrote: what the registry says is never trusted more.
 * Administrators only; one search in flight per tenant (each is a request to the registry).
 */

const PATH = '/portal/upstreams/registry';
const FORBIDDEN = messagePage('Administrators only', "Only an administrator manages the organisation's upstream servers.", 'bad');

function serverRow(csrf: string, server: RegistryServer): SafeHtml {
  const entry = registryUpstreamEntry(server);
  const action = entry
    ? html`<form method="post" action="/portal/upstreams" class="inline"><input type="hidden" name="_csrf" value="${csrf}">
<input type="hidden" name="entry" value="${JSON.stringify(entry)}"><button type="submit" class="small">Add</button></form>`
    : html`<span class="muted">no remote endpoint</span>`;
  return html`<tr data-registry-server="${server.name}"><td><strong>${server.title ?? server.name}</strong> <code>${server.name}</code>
<br><span class="muted">${(server.description ?? '').slice(0, 300)}</span></td><td><code>${entry ? String(entry.url) : ''}</code></td>
<td class="actions">${action}</td></tr>`;
}

function registryPage(me: SignedIn, csrf: string, query: string, found: { servers?: RegistryServer[]; error?: string }): string {
  const results = found.error
    ? html`<div class="box bad" role="alert"><p class="error">${found.error}</p></div>`
    : found.servers === undefined
      ? ''
      : found.servers.length
        ? html`<table><thead><tr><th>Server</th><th>Endpoint</th><th>Actions</th></tr></thead><tbody>${found.servers.map((s) => serverRow(csrf, s))}</tbody></table>`
        : html`<div class="box"><p>No server in the registry matches.</p></div>`;
  return portalPage(
    'MCP Registry',
    me,
    'upstreams',
    html`<h1>Find a server in the MCP Registry</h1>
<p class="muted">Servers published to the MCP Registry; adding one makes it an upstream server of your organisation, checked as one you write yourself. <a href="/portal/upstreams">Back to upstream servers</a></p>
<form method="get" action="${PATH}" class="box"><label for="q">Name contains</label>
<input type="text" id="q" name="q" value="${query}" maxlength="${MCP_REGISTRY_LIMITS.queryChars}"> <button type="submit">Search</button></form>
${results}`,
  );
}

export function registryRouter(ctx: ServiceContext): Router {
  const router = Router();
  const searches = new InFlightLimit([1]);

  router.get(PATH, async (req: Request, res: Response) => {
    const me = await signedInAdmin(ctx, req, res, PATH, FORBIDDEN);
    if (!me) return;
    const query = typeof req.query.q === 'string' ? req.query.q.trim().slice(0, MCP_REGISTRY_LIMITS.queryChars) : '';
    const csrf = csrfToken(ctx, req);
    if (!query) return res.send(registryPage(me, csrf, '', {}));
    const leave = searches.tryEnter([`tenant:${me.caller.tenantId}`]);
    if (!leave)
      return res
        .status(429)
        .set('Retry-After', '2')
        .send(registryPage(me, csrf, query, { error: 'Another search of your organisation is still running; try again in a moment.' }));
    try {
      const servers = await searchMcpRegistry({ baseUrl: ctx.config.MCP_REGISTRY_URL }, query);
      res.send(registryPage(me, csrf, query, { servers }));
    } catch (err) {
      if (!(err instanceof McpRegistryError)) throw err;
      res.status(502).send(registryPage(me, csrf, query, { error: `${err.message}.` }));
    } finally {
      leave();
    }
  });
  return router;
}
