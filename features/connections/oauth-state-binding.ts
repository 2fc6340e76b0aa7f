import type { Binding } from './browser-binding.js';
import type { ConnectionAttempt } from './store/connection-attempts.js';

/**
 * The OAuth state's binding to the browser that opened the connect link: a cookie sent only to
 * the callback, one per attempt (so several connect links opened side by side in one browser all
 * work, and reopening a link replaces its cookie just as it replaces the attempt's state).
 */

/** How long a consent request (a state and its cookie) is good for. */
export const CONSENT_REQUEST_TTL_SEC = 600;

/**
 * Consent requests one user may have open at once (handed out in the last CONSENT_REQUEST_TTL_SEC
 * and not come back): this bounds the binding cookies any of their browsers holds.
 */
export const MAX_OPEN_CONSENT_REQUESTS = 10;

export const oauthStateBinding = (attempt: Pick<ConnectionAttempt, 'id' | 'tenantId' | 'userId'>, state: string): Binding => ({
  purpose: 'oauth-state',
  // Attempt ids are UUIDs: letters, digits and dashes, all valid in a cookie name.
  name: `sb_oauth_${attempt.id}`,
  path: '/oauth/callback',
  subject: `${state}\n${attempt.tenantId}\n${attempt.userId}`,
});
