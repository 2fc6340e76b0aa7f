import { type Request, type Response, Router } from 'express';
import { getUser } from '../../features/accounts/store/users.js';
import type { ServiceContext } from '../../features/context.js';
import { html, page } from './html.js';
import { readPortalUser } from './session-cookie.js';

/** GET /portal — the portal's front page: who is signed in, and the way to integrations, accounts and approvals. */
export function homeRouter(ctx: ServiceContext): Router {
  const router = Router();

  router.get('/portal', async (req: Request, res: Response) => {
    const human = await readPortalUser(ctx, req);
    if (!human) return res.redirect(303, '/portal/login');
    const user = await getUser(ctx.pool, human.userId);
    res.send(
      page(
        'Portal',
        html`<h1>Switchboard</h1><p>Signed in as <strong data-testid="signed-in-as">${user?.email ?? human.userId}</strong>.</p>
<ul><li><a href="/portal/integrations">Integrations</a>: connect services, add API keys</li>
<li><a href="/portal/accounts">Accounts</a>: rename, choose defaults, disconnect${user?.roles.includes('admin') ? ', share organisation accounts' : ''}</li>
<li><a href="/portal/approvals">Approvals</a>: approve or deny the calls your agents (or your organisation's) wait to make</li>${
          user?.roles.includes('admin')
            ? html`<li><a href="/portal/upstreams">Upstream servers</a>: the organisation's own remote MCP servers</li>`
            : ''
        }</ul>
<form method="post" action="/portal/logout"><button type="submit">Sign out</button></form>`,
      ),
    );
  });

  return router;
}
