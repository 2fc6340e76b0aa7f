import { whyMayNotConnect } from '../../../features/connections/connect-rule.js';
import type { ConnectionAttempt } from '../../../features/connections/store/connection-attempts.js';
import type { ServiceContext } from '../../../features/context.js';
import type { CaptureSession } from './capture-sessions.js';

/** The user's connect rule now (roles read fresh), or the reason they may not connect. */
export function mayStillConnect(ctx: ServiceContext, session: CaptureSession, attempt?: ConnectionAttempt): Promise<string | undefined> {
  return whyMayNotConnect(ctx.pool, session.owner, session.integration, attempt?.accountScope ?? 'user');
}
