import type { Request, Response } from 'express';
import type { CallerOwner } from '../../core/caller.js';

/**
 * A browser's request to a step of a connection flow: its cookies (the binding), the response
 * (binding cookies are set and cleared on it) and who is signed in to the portal there, read
 * fresh from the store. The server builds it: the steps never read a portal session themselves.
 */
export interface BrowserVisit {
  req: Request;
  res: Response;
  signedInUser(): Promise<CallerOwner | undefined>;
}
