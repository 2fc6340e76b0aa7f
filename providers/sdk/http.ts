import { DEFAULT_RETRY_AFTER_SEC, rateLimitWait } from './rate-limit.js';

/**
 * An HTTP error from a provider's API, with its status and (untrusted) body text. `retryAfterSec`
 * is set when the service said to slow down (see rate-limit.ts); a 429 always counts as that.
 */
export class ProviderHttpError extends Error {
  readonly code = 'provider_http_error';
  readonly retryAfterSec: number | undefined;
  constructor(
    readonly status: number,
    readonly body: string,
    retryAfterSec?: number,
    /** The answer's `WWW-Authenticate` on a 401/403 (a Bearer challenge: step-up, resource metadata). */
    readonly challenge?: string,
  ) {
    super(`provider answered HTTP ${status}`);
    this.name = 'ProviderHttpError';
    this.retryAfterSec = retryAfterSec ?? (status === 429 ? DEFAULT_RETRY_AFTER_SEC : undefined);
  }

  /** The error a non-2xx response stands for, with the wait its rate-limit headers ask for. */
  static of(res: Response, body: string): ProviderHttpError {
    const challenge = res.status === 401 || res.status === 403 ? (res.headers.get('www-authenticate') ?? undefined) : undefined;
    return new ProviderHttpError(res.status, body, rateLimitWait(res.status, res.headers), challenge);
  }
}

/** Reads a JSON body, turning a non-2xx answer into a ProviderHttpError. */
export async function readJson(res: Response): Promise<unknown> {
  const text = await res.text();
  if (!res.ok) throw ProviderHttpError.of(res, text);
  return text.length ? JSON.parse(text) : null;
}

/** A provider answered more bytes than CONNECTIONS_PROVIDER_RESPONSE_MAX_BYTES; reading stopped there. */
export class ResponseTooLarge extends Error {
  readonly code = 'response_too_large';
  constructor(readonly maxBytes: number) {
    super(`The provider's response was larger than ${maxBytes} bytes; Switchboard stopped reading it`);
    this.name = 'ResponseTooLarge';
  }
}
