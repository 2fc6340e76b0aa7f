import { type Request, type Response, Router } from 'express';
import { MetaToolError } from '../../core/errors.js';
import { forTenant } from '../../features/connections/services.js';
import { startConnection } from '../../features/connections/tools/connect.js';
import type { ServiceContext } from '../../features/context.js';
import { apiKeyPagePath, FOR_ORGANISATION } from './connect-controls.js';
import { requireCsrf } from './csrf.js';
import { formBody } from './form-body.js';
import { messagePage } from './html.js';
import { signedIn, toSignIn } from './signed-in.js';

/** POST /portal/integrations/:name/connect — what a Connect button does. */
export function connectActionRouter(base: ServiceContext): Router {
  const router = Router();

  // Starts a connection attempt for the signed-in user (or, for an administrator, the
  // organisation) and sends the browser to its connect link, which goes on to the consent page.
  router.post('/portal/integrations/:name/connect', formBody, requireCsrf(base), async (req: Request, res: Response) => {
    const me = await signedIn(base, req);
    if (!me) return toSignIn(res, '/portal/integrations');
    const ctx = await forTenant(base, me.caller.tenantId);
    const name = String(req.params.name);
    const forOrg = req.body?.for === FOR_ORGANISATION;
    if (forOrg && !me.isAdmin) {
      return res.status(403).send(messagePage('Administrators only', 'Only an administrator can connect an organisation account.', 'bad'));
    }
    if (ctx.registry.get(name)?.manifest.auth === 'apikey') {
      return res.redirect(303, apiKeyPagePath(name, forOrg));
    }
    try {
      const started = await startConnection(ctx, me.caller, name, { accountScope: forOrg ? 'tenant' : 'user' });
      res.redirect(303, started.url);
    } catch (err) {
      if (!(err instanceof MetaToolError)) throw err;
      res.status(err.status).send(messagePage('Cannot connect', err.message, 'bad'));
    }
  });

  return router;
}
