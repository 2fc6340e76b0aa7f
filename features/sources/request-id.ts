import { createHmac, hkdfSync } from 'node:crypto';
import type { Caller } from '../../core/caller.js';
import { assertionSigningKey } from './assertion.js';

/**
 * The requestId a remote source sees: a MAC of the local tenant, local user and the caller's id,
 * keyed by a secret derived from the source's assertionKey. Two local users who pick the same
 * requestId never share a remote result, and the remote learns nothing of the ids themselves.
 */
const macKeys = new Map<string, Buffer>();

function macKey(encodedAssertionKey: string): Buffer {
  let key = macKeys.get(encodedAssertionKey);
  if (!key) {
    const secret = assertionSigningKey(encodedAssertionKey).export({ format: 'der', type: 'pkcs8' });
    key = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'switchboard source request id', 32));
    macKeys.set(encodedAssertionKey, key);
  }
  return key;
}

export function forwardedRequestId(encodedAssertionKey: string, caller: Caller, requestId: string): string {
  return createHmac('sha256', macKey(encodedAssertionKey)).update(`${caller.tenantId}\0${caller.userId}\0${requestId}`).digest('base64url');
}
