import { readFileSync } from 'node:fs';
import express, { type NextFunction, type Request, type Response, Router } from 'express';
import { z } from 'zod';
import { type Binding, bindBrowser, isBoundBrowser } from '../../../features/connections/browser-binding.js';
import { type ConnectionAttempt, getAttempt } from '../../../features/connections/store/connection-attempts.js';
import type { ServiceContext } from '../../../features/context.js';
import { csrfToken, requireCsrf } from '../csrf.js';
import { messagePage, notAllowedPage } from '../html.js';
import { readPortalUser } from '../session-cookie.js';
import { capture } from './capture.js';
import {
  CaptureLimitError,
  type CaptureSession,
  CaptureSessions,
  captureSessionsOptions,
  FORWARDED_KEYS,
  VIEWPORT,
} from './capture-sessions.js';
import { mayStillConnect } from './may-still-connect.js';
import { capturePage } from './page.js';

/**
 * Cookie capture: after the connect link's account check, the human signs in to the service in
 * a browser Switchboard runs, watching it live, and presses Capture. Every route answers 404 to
 * anyone but the signed-in user the session was opened for, in the browser that opened it (a
 * binding cookie sent only to the session's paths); every POST needs the CSRF token. The page and
 * Capture also re-check that the user may still connect (roles read now), and Capture that the
 * attempt is still open (PENDING and before its expiry).
 */

/** The capture session's binding to the browser whose connect link opened it. */
const captureBinding = (session: Pick<CaptureSession, 'id' | 'owner'>): Binding => ({
  purpose: 'capture-session',
  // One cookie per session, told apart by its path.
  name: 'sb_capture',
  path: `/portal/capture/${session.id}`,
  subject: `${session.id}\n${session.owner.tenantId}\n${session.owner.userId}`,
});

const managers = new WeakMap<ServiceContext, CaptureSessions>();

/** The capture sessions of this server (one manager per service context). */
export function captureSessions(ctx: ServiceContext): CaptureSessions {
  let manager = managers.get(ctx);
  if (!manager) {
    manager = new CaptureSessions(captureSessionsOptions(ctx.config, ctx.logger));
    managers.set(ctx, manager);
  }
  return manager;
}

/**
 * The connect link's branch for a cookie attempt (the human is already checked to be its user):
 * opens (or reopens) the attempt's capture session and sends the browser to its page.
 */
export async function startCookieCapture(ctx: ServiceContext, res: Response, attempt: ConnectionAttempt): Promise<void> {
  const { integration } = attempt;
  const provider = ctx.registry.get(integration);
  const loginUrl = ctx.registry.loginUrl(integration);
  const cookieDomain = ctx.registry.cookieDomain(integration);
  if (provider?.manifest.auth !== 'cookie' || !loginUrl || !cookieDomain) {
    res.status(400).send(messagePage('Cannot connect here', `${integration} is not connected through this link.`, 'bad'));
    return;
  }
  try {
    const session = await captureSessions(ctx).open({
      attemptId: attempt.id,
      integration,
      owner: { tenantId: attempt.tenantId, userId: attempt.userId },
      loginUrl,
      cookieDomain,
      // The operator's <PREFIX>_LOGIN_URL (not the manifest's): its exact host:port may be private.
      loginUrlFromOperator: loginUrl !== provider.manifest.cookie?.loginUrl,
      attemptExpiresAt: attempt.expiresAt,
    });
    bindBrowser(ctx, res, captureBinding(session), (session.expiresAt - Date.now()) / 1000);
    res.redirect(303, `/portal/capture/${session.id}`);
  } catch (err) {
    if (err instanceof CaptureLimitError) {
      res
        .status(429)
        .set('retry-after', '60')
        .send(messagePage('Too many sign-in browsers', err.message, 'bad'));
      return;
    }
    ctx.logger.error({ integration, err: (err as Error).message }, 'could not open a capture browser');
    res
      .status(503)
      .send(
        messagePage(
          'Sign-in browser not available',
          'Switchboard could not start the browser it uses for this sign-in. Try again in a moment; if it keeps failing, an operator should check CHROMIUM_PATH.',
          'bad',
        ),
      );
  }
}

const clickInput = z.object({ x: z.number().finite(), y: z.number().finite() }).strip();
const typeInput = z.object({ text: z.string().min(1).max(1000) }).strip();
const keyInput = z.object({ key: z.string().refine((k) => FORWARDED_KEYS.has(k), 'not a forwarded key') }).strip();
const scrollInput = z.object({ dy: z.number().finite() }).strip();

const clamp = (v: number, max: number) => Math.min(Math.max(Math.round(v), 0), max - 1);

export function cookieCaptureRouter(ctx: ServiceContext): Router {
  const router = Router();
  const sessions = captureSessions(ctx);
  const json = express.json({ limit: '16kb' });
  const csrf = requireCsrf(ctx);
  const script = readFileSync(new URL('./capture-client.js', import.meta.url), 'utf8');
  const own = ownSession(ctx, sessions);

  router.get('/portal/capture.js', (_req: Request, res: Response) => {
    res.type('text/javascript').set('cache-control', 'no-cache').send(script);
  });

  router.get('/portal/capture/:sid', async (req: Request, res: Response) => {
    if (!(await readPortalUser(ctx, req))) return res.redirect(303, `/portal/login?next=${encodeURIComponent(req.originalUrl)}`);
    const session = await own(req, res);
    if (!session) return;
    const refusal = await mayStillConnect(ctx, session, await getAttempt(ctx.pool, session.attemptId));
    if (refusal) {
      await sessions.close(session, 'user may no longer connect');
      return res.status(403).send(notAllowedPage(refusal, 'Nothing was connected.'));
    }
    const displayName = ctx.registry.get(session.integration)?.manifest.displayName ?? session.integration;
    res.set('cache-control', 'no-store').send(capturePage(session, { displayName, csrf: csrfToken(ctx, req) }));
  });

  router.get('/portal/capture/:sid/frame.jpg', async (req: Request, res: Response) => {
    const session = await own(req, res);
    if (!session) return;
    try {
      const frame = await sessions.frame(session);
      res.set('cache-control', 'no-store').type('image/jpeg').send(frame);
    } catch (err) {
      if (session.closed) return res.status(404).json({ error: 'No such capture session' });
      ctx.logger.debug({ err: (err as Error).message }, 'capture frame failed');
      res.status(503).set('retry-after', '1').json({ error: 'No frame right now' });
    }
  });

  router.get('/portal/capture/:sid/state', async (req: Request, res: Response) => {
    const session = await own(req, res);
    if (session) res.set('cache-control', 'no-store').json(await sessions.state(session));
  });

  const post: PostRoute = (path, handler) => router.post(`/portal/capture/:sid/${path}`, json, csrf, handler);
  inputRoutes(post, sessions, forwardInput(ctx, own));

  post('cancel', async (req: Request, res: Response) => {
    const session = await own(req, res);
    if (!session) return;
    await sessions.close(session, 'cancelled');
    res.json({
      ok: true,
      status: 'cancelled',
      title: 'Cancelled',
      message: 'Nothing was stored. Open the connect link again to start over.',
    });
  });

  post('capture', async (req: Request, res: Response) => {
    const session = await own(req, res);
    if (!session) return;
    if (session.capturing) return res.status(409).json({ ok: false, status: 'busy', message: 'Capture is already running.' });
    session.capturing = true;
    try {
      const outcome = await capture(ctx, sessions, session);
      res.status(outcome.httpStatus).json(outcome.body);
    } finally {
      session.capturing = false;
    }
  });

  return router;
}

type OwnSession = (req: Request, res: Response) => Promise<CaptureSession | undefined>;
type PostRoute = (path: string, handler: (req: Request, res: Response, next: NextFunction) => unknown) => unknown;
type Forward = <T>(
  schema: z.ZodType<T>,
  act: (session: CaptureSession, input: T) => Promise<unknown>,
) => (req: Request, res: Response) => Promise<unknown>;

/**
 * The caller's session or a 404 (unknown, over, someone else's, or opened in another browser:
 * all look the same).
 */
function ownSession(ctx: ServiceContext, sessions: CaptureSessions): OwnSession {
  return async (req, res) => {
    const human = await readPortalUser(ctx, req);
    const session = human ? sessions.get(String(req.params.sid), human) : undefined;
    if (session && isBoundBrowser(ctx, req, captureBinding(session))) return session;
    res.set('cache-control', 'no-store');
    if (req.method === 'GET' && req.accepts(['json', 'html']) === 'html') {
      res
        .status(404)
        .send(messagePage('Not found', 'There is no sign-in session here. It may have ended: open the connect link again.', 'bad'));
    } else {
      res.status(404).json({ error: 'No such capture session' });
    }
    return undefined;
  };
}

/** A forwarded input: parsed, then queued behind the ones before it. */
function forwardInput(ctx: ServiceContext, own: OwnSession): Forward {
  return (schema, act) => async (req, res) => {
    const session = await own(req, res);
    if (!session) return;
    const parsed = schema.safeParse(req.body);
    if (!parsed.success) return res.status(400).json({ error: parsed.error.issues.map((i) => i.message).join('; ') });
    try {
      await act(session, parsed.data);
      res.json({ ok: true });
    } catch (err) {
      if (session.closed) return res.status(404).json({ error: 'No such capture session' });
      ctx.logger.debug({ err: (err as Error).message }, 'capture input failed');
      res.status(409).json({ error: 'The page did not take that input; try again' });
    }
  };
}

/** The human's clicks, typing, keys and scrolling, sent to the page in the browser Switchboard runs (kept inside the viewport). */
function inputRoutes(post: PostRoute, sessions: CaptureSessions, forward: Forward): void {
  post(
    'click',
    forward(clickInput, (s, { x, y }) =>
      sessions.input(s, (page) => page.mouse.click(clamp(x, VIEWPORT.width), clamp(y, VIEWPORT.height))),
    ),
  );
  post(
    'type',
    forward(typeInput, (s, { text }) => sessions.input(s, (page) => page.keyboard.type(text))),
  );
  post(
    'key',
    forward(keyInput, (s, { key }) => sessions.input(s, (page) => page.keyboard.press(key))),
  );
  post(
    'scroll',
    forward(scrollInput, (s, { dy }) => sessions.input(s, (page) => page.mouse.wheel(0, Math.max(-2000, Math.min(2000, dy))))),
  );
}
