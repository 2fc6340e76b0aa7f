/**
 * A request that may have reached the service and whose answer was lost on the way back: the
 * connection was reset or closed after the request went out, the answer's body was cut, an MCP
 * session's answer stream ended without the result. The call may have run, so it is answered
 * `outcome_unknown` (check before retrying), never `tool_failed` (which an agent retries).
 */
export class RequestOutcomeUnknown extends Error {
  readonly code = 'request_outcome_unknown';
  constructor(message: string) {
    super(message);
    this.name = 'RequestOutcomeUnknown';
  }
}

/**
 * Failures before a byte of the request left: no address, no route, the connection refused or
 * never made, a certificate refused in the handshake. Nothing reached the service.
 */
const BEFORE_SENDING = new Set([
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_FAIL',
  'EAI_NONAME',
  'ECONNREFUSED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENETDOWN',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'ERR_SSL_WRONG_VERSION_NUMBER',
]);

/** Failures of a connection that was made: the request may have gone out whole before it broke. */
const AFTER_CONNECTING = new Set([
  'ECONNRESET',
  'EPIPE',
  'ECONNABORTED',
  'ETIMEDOUT',
  'ERR_STREAM_PREMATURE_CLOSE',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_RES_CONTENT_LENGTH_MISMATCH',
]);

/**
 * Whether a failed request (fetch's error, or an error reading its answer's body) may have reached
 * the service: a RequestOutcomeUnknown, or a network error whose code (on it or its causes) says
 * the connection broke after it was made. A failure before sending, or anything else, is not one.
 */
export function mayHaveReachedService(err: unknown): boolean {
  if (err instanceof RequestOutcomeUnknown) return true;
  let current: unknown = err;
  for (let depth = 0; current && typeof current === 'object' && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') {
      if (BEFORE_SENDING.has(code)) return false;
      if (AFTER_CONNECTING.has(code)) return true;
    }
    current = (current as { cause?: unknown }).cause;
  }
  // undici's error for a body whose connection closed before its end.
  return err instanceof TypeError && err.message === 'terminated';
}
