import type { NextFunction, Request, Response } from 'express';
import { isOwnOrigin } from '../../core/own-origins.js';
import type { ServiceContext } from '../../features/context.js';
import { messagePage } from './html.js';

/**
 * Cross-site request forgery guard for every route a browser's session cookie authenticates
 * (the portal, its forms, cookie capture, connect links). A state-changing request (any method
 * but GET, HEAD and OPTIONS) is refused unless it comes from the portal's own origin:
 *
 * - `Sec-Fetch-Site` (sent by every current browser) must be `same-origin`, or `none` for a
 *   request the user made themselves (a bookmark, a reload). `same-site` is refused too: another
 *   port or subdomain of the same site receives the portal's SameSite=Lax cookie, so it is as
 *   foreign as any other site.
 * - `Origin`, when present, must be one of ours (PUBLIC_BASE_URL's, core/own-origins.ts; `null`
 *   from a sandboxed frame or a redirect chain is foreign). The Host/Origin guard ahead of every
 *   route (surfaces/http/host-origin-guard.ts) refuses foreign origins too; this check stays on its own
 *   so the portal's forms never depend on that one's exceptions.
 *
 * A request with neither header does not come from a browser page, so it cannot ride a
 * victim's cookies; the portal's forms also carry a CSRF token (csrf.ts). This guard is what
 * protects the two forms that cannot have one: sign-in with a link (login CSRF: the visitor has
 * no session yet) and sign-out.
 */

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const ACCEPTED_FETCH_SITES = new Set(['same-origin', 'none']);

export function refuseCrossSiteWrites(ctx: ServiceContext) {
  const portalOrigin = new URL(ctx.config.PUBLIC_BASE_URL).origin;
  return (req: Request, res: Response, next: NextFunction) => {
    if (SAFE_METHODS.has(req.method)) return next();
    const fetchSite = req.get('sec-fetch-site');
    const origin = req.get('origin');
    const foreign =
      (fetchSite !== undefined && !ACCEPTED_FETCH_SITES.has(fetchSite)) || (origin !== undefined && !isOwnOrigin(ctx.config, origin));
    if (!foreign) return next();
    ctx.logger.warn(
      { method: req.method, path: req.baseUrl + req.path, origin: origin?.slice(0, 100), fetchSite },
      'refused a cross-site request to a portal route',
    );
    res
      .status(403)
      .send(
        messagePage(
          'Request refused',
          `This request came from another site (${String(origin ?? fetchSite).slice(0, 100)}), not from Switchboard's own pages, so nothing was done. Open the portal at ${portalOrigin} and try again.`,
          'bad',
        ),
      );
  };
}
