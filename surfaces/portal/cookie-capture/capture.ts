import { checkContext } from '../../../features/connections/check-context.js';
import { completeConnection } from '../../../features/connections/complete.js';
import { linkExpired } from '../../../features/connections/link-expired.js';
import { getAttempt, isOpenAttempt } from '../../../features/connections/store/connection-attempts.js';
import type { ServiceContext } from '../../../features/context.js';
import type { CaptureSession, CaptureSessions } from './capture-sessions.js';
import { mayStillConnect } from './may-still-connect.js';

/** What Capture answers: the HTTP status and the page's message. */
interface CaptureOutcome {
  httpStatus: number;
  body: { ok: boolean; status: string; title: string; message: string };
}

/**
 * Capture: the service's cookies from the session's context, checked with the provider's cheap
 * `checkSession`; only a live session is stored (sealed, through completeConnection, which also
 * wakes wait_for_connection). A failed check stores nothing and leaves the browser open.
 */
export async function capture(ctx: ServiceContext, sessions: CaptureSessions, session: CaptureSession): Promise<CaptureOutcome> {
  const provider = ctx.registry.get(session.integration);
  const name = provider?.manifest.displayName ?? session.integration;
  const log = ctx.logger.child({ attemptId: session.attemptId, integration: session.integration });
  const attempt = await getAttempt(ctx.pool, session.attemptId);
  if (!provider || !attempt || !isOpenAttempt(attempt)) {
    await sessions.close(session, 'attempt final');
    return attempt?.status === 'CONNECTED'
      ? {
          httpStatus: 200,
          body: { ok: true, status: 'connected', title: 'Connected', message: `This ${name} connection is already complete.` },
        }
      : {
          httpStatus: 410,
          body: {
            ok: false,
            status: 'expired',
            ...linkExpired('has-expired'),
          },
        };
  }
  const refusal = await mayStillConnect(ctx, session, attempt);
  if (refusal) {
    log.info({ refused: refusal }, 'capture by a user who may no longer connect; nothing stored');
    await sessions.close(session, 'user may no longer connect');
    return { httpStatus: 403, body: { ok: false, status: 'forbidden', title: 'Not allowed', message: `${refusal} Nothing was stored.` } };
  }
  const notSignedIn: CaptureOutcome = {
    httpStatus: 409,
    body: {
      ok: false,
      status: 'not_signed_in',
      title: `Sign in to ${name}`,
      message: `You are not signed in to ${name} yet, so nothing was stored. Sign in above, then press Capture again.`,
    },
  };
  const cookies = await sessions.cookies(session);
  if (!cookies.length) return notSignedIn;
  const toolContext = checkContext(ctx, {
    provider,
    credential: { type: 'cookie', cookies },
    caller: session.owner,
    logger: log,
    timeoutMs: 10_000,
  });
  try {
    if (provider.checkSession && !(await provider.checkSession(toolContext))) return notSignedIn;
  } catch (err) {
    log.warn({ err: (err as Error).message }, 'capture: could not check the session');
    return {
      httpStatus: 502,
      body: {
        ok: false,
        status: 'check_failed',
        title: `Sign in to ${name}`,
        message: `Switchboard could not reach ${name} to check the sign-in, so nothing was stored. Press Capture again in a moment.`,
      },
    };
  }
  const identity = provider.identify
    ? await provider.identify(toolContext).catch((err: Error) => {
        log.warn({ err: err.message }, 'capture: could not identify the account');
        return undefined;
      })
    : undefined;
  const saved = await completeConnection(ctx, attempt, {
    label: identity?.label ?? name,
    externalId: identity?.externalId ?? null,
    credential: { type: 'cookie', cookies },
  });
  await sessions.close(session, saved ? 'captured' : 'attempt expired');
  if (!saved) {
    return {
      httpStatus: 410,
      body: {
        ok: false,
        status: 'expired',
        ...linkExpired('expired-before-you-finished'),
      },
    };
  }
  log.info({ accountId: saved.id, cookies: cookies.length }, 'cookie session captured');
  return {
    httpStatus: 200,
    body: {
      ok: true,
      status: 'connected',
      title: 'Connected',
      message: `Your ${name} account ${saved.label} is connected. You can close this window.`,
    },
  };
}
