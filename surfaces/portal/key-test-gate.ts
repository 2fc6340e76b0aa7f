import type { NextFunction, Request, Response } from 'express';
import type { InFlightLimit } from '../../core/in-flight-limit.js';
import type { ServiceContext } from '../../features/context.js';
import { keyTestsRefused } from '../../platform/telemetry/metrics.js';
import { KEY_TEST_RETRY_AFTER_SEC, keyTestKeys } from './apikey-test-call.js';
import { messagePage } from './html.js';
import { signedSessionClaims } from './session-cookie.js';

/**
 * The key-test bound (apikey-test-call.ts KEY_TESTS_IN_FLIGHT) answered at the front of the app:
 * a submission of a user or tenant with as many tests in flight as allowed is refused here, before
 * the router, the form body, the CSRF check and the page a route would render. A burst of hundreds
 * of made-up keys then costs this process little more than reading the requests (issue 29, the
 * hostile-tenant benchmark): every tenant shares its event loop. Refusing changes nothing, so it
 * needs no CSRF token; whatever this gate cannot read (no valid session cookie) goes on to the
 * route, whose own check of the bound stays the one that admits.
 */

/** The refusal page, rendered once: it says nothing of the request. */
const KEY_TEST_BUSY_PAGE = messagePage(
  'A key is being tested already',
  'Switchboard is still testing another key you (or your organisation) submitted. Nothing was saved; wait for its answer, then submit this key again.',
  'bad',
);
/** …and encoded once: a burst writes it hundreds of times. */
const BUSY_PAGE_BYTES = Buffer.from(KEY_TEST_BUSY_PAGE);

/** 429 with Retry-After and the page above, sent without an ETag (nothing to revalidate). */
export function refuseKeyTest(res: Response): void {
  keyTestsRefused.inc();
  res
    .status(429)
    .set({ 'Retry-After': String(KEY_TEST_RETRY_AFTER_SEC), 'Cache-Control': 'no-store' })
    .type('html')
    .end(BUSY_PAGE_BYTES);
}

export function keyTestGate(ctx: ServiceContext, limit: InFlightLimit) {
  return async (req: Request, res: Response, next: NextFunction) => {
    const claims = await signedSessionClaims(ctx, req);
    if (claims && limit.isFull(keyTestKeys(claims))) return refuseKeyTest(res);
    next();
  };
}
