/**
 * Reads a provider's "slow down" answer: how long to wait before the next call. Headers come from
 * an untrusted upstream, so every value is parsed strictly and clamped: garbage, negative or
 * absurd values never break a call, they fall back to a default or the cap.
 */

/** The wait when a service says "too many requests" without a usable time (GitHub's advice for secondary limits). */
export const DEFAULT_RETRY_AFTER_SEC = 60;
/** No service's window is longer than an hour (GitHub's primary limit resets hourly); a longer wait is not believed. */
export const MAX_RETRY_AFTER_SEC = 3600;

/** Epoch values above these are milliseconds or seconds since 1970, not a delay (Linear sends ms, GitHub s). */
const EPOCH_MS_FLOOR = 1e12;
const EPOCH_SEC_FLOOR = 1e9;

/**
 * Seconds to wait when `status` + `headers` say the caller is rate-limited, else undefined:
 * - 429: always; the time from `Retry-After`, else the reset headers, else the default;
 * - 403 (GitHub's primary and secondary limits): only with `x-ratelimit-remaining: 0` or a `Retry-After`;
 * - 503: only with a valid `Retry-After` (a plain outage is not a rate limit).
 */
export function rateLimitWait(status: number, headers: Headers, nowMs: number = Date.now()): number | undefined {
  const retryAfter = parseRetryAfter(headers.get('retry-after'), nowMs);
  const exhausted = [headers.get('x-ratelimit-remaining'), headers.get('x-ratelimit-requests-remaining')].some(
    (v) => v !== null && v.trim() === '0',
  );
  const reset = exhausted ? parseReset(headers.get('x-ratelimit-reset') ?? headers.get('x-ratelimit-requests-reset'), nowMs) : undefined;
  if (status === 429) return retryAfter ?? reset ?? DEFAULT_RETRY_AFTER_SEC;
  if (status === 403 && (retryAfter !== undefined || exhausted)) return retryAfter ?? reset ?? DEFAULT_RETRY_AFTER_SEC;
  if (status === 503 && retryAfter !== undefined) return retryAfter;
  return undefined;
}

/** RFC 9110 `Retry-After`: delay-seconds or an HTTP-date. Anything else (negative, fractions, words) is undefined. */
export function parseRetryAfter(value: string | null, nowMs: number = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d{1,12}$/.test(text)) return clampWait(Number(text));
  // An HTTP-date names a weekday and GMT; Date.parse alone would also take "1" or "2024" as dates.
  if (text.length <= 64 && /^[A-Za-z]{3},? .*\bGMT$/.test(text)) return secondsUntil(Date.parse(text), nowMs);
  return undefined;
}

/**
 * An `x-ratelimit-reset`-style value: epoch seconds (GitHub), epoch milliseconds (Linear), an
 * ISO-8601 time (Jira), or a delay in seconds (services following the IETF RateLimit draft).
 */
export function parseReset(value: string | null, nowMs: number = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d{1,16}$/.test(text)) {
    const n = Number(text);
    if (n >= EPOCH_MS_FLOOR) return secondsUntil(n, nowMs);
    if (n >= EPOCH_SEC_FLOOR) return secondsUntil(n * 1000, nowMs);
    return clampWait(n);
  }
  if (text.length <= 64 && /^\d{4}-\d{2}-\d{2}T[\d:.]+(Z|[+-]\d{2}:?\d{2})$/.test(text)) return secondsUntil(Date.parse(text), nowMs);
  return undefined;
}

function secondsUntil(atMs: number, nowMs: number): number | undefined {
  if (!Number.isFinite(atMs)) return undefined;
  return clampWait(Math.ceil((atMs - nowMs) / 1000));
}

/** Whole seconds in [0, MAX_RETRY_AFTER_SEC]: a time in the past means "now". */
function clampWait(seconds: number): number {
  if (Number.isNaN(seconds) || seconds <= 0) return 0;
  return Math.min(Math.ceil(seconds), MAX_RETRY_AFTER_SEC);
}
