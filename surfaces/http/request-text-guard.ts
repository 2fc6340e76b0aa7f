import { parse as parseQuery } from 'node:querystring';
import type { NextFunction, Request, Response } from 'express';
import { messagePage } from '../portal/html.js';

/**
 * U+0000 in an address. Postgres `text` cannot hold it, so no id, token, state or name a route
 * looks up (an account id, an integration, a connect link's `t`, an OAuth callback's `state`) can
 * carry one: each route would otherwise send it to the database and answer 500. Refused here, for
 * every route at once, naming what is wrong: in the path, nothing is there (404); in the query
 * string, the parameter is named (400). (A literal NUL byte never arrives: Node's parser refuses
 * it; `%00` is the only way in. Percent-encoded invalid UTF-8 decodes to U+FFFD, never to a lone
 * surrogate, so that is all an address can carry that Postgres cannot.)
 */
export function refuseNulInAddress(req: Request, res: Response, next: NextFunction): void {
  const url = req.originalUrl;
  if (!/%00/i.test(url)) {
    next();
    return;
  }
  const queryAt = url.indexOf('?');
  const path = queryAt === -1 ? url : url.slice(0, queryAt);
  if (/%00/i.test(path)) {
    sendRequestError(
      req,
      res,
      404,
      'Not found',
      'There is no page here: its address contains U+0000 (a NUL character), which no address has.',
    );
    return;
  }
  const query = parseQuery(url.slice(queryAt + 1));
  const names = Object.entries(query)
    .filter(([name, value]) => name.includes('\u0000') || [value ?? ''].flat().some((v) => v.includes('\u0000')))
    .map(([name]) => `"${name.replaceAll('\u0000', '\uFFFD').slice(0, 60)}"`);
  sendRequestError(
    req,
    res,
    400,
    'Bad address',
    `The address's query parameter ${names.join(', ')} contains U+0000 (a NUL character), which no value here can hold.`,
  );
}

/** A 4xx for the request itself: the portal's page for a browser, `{error}` for an API client. */
export function sendRequestError(req: Request, res: Response, status: number, title: string, message: string): void {
  if (req.accepts(['json', 'html']) === 'html') {
    res.status(status).send(messagePage(title, message, 'bad'));
  } else {
    res.status(status).json({ error: message });
  }
}
