import type { NextFunction, Request, Response } from 'express';

/**
 * `Cache-Control: no-store` on every answer of the routes a browser's session cookie shapes (the
 * portal, connect links, the OAuth callback). Without it the browser keeps those pages in its
 * cache, and on a shared computer the next person who presses Back after the last one signed out
 * sees their accounts, approvals (with the calls' arguments) and forms, served from the cache
 * without asking the server. A route with a public, cacheable answer (a static script, the client
 * metadata document) sets its own Cache-Control after this one.
 */
export function noStore(_req: Request, res: Response, next: NextFunction): void {
  res.set('cache-control', 'no-store');
  next();
}
