import { describe, expect, it } from 'vitest';
import { ProviderHttpError } from '../../providers/sdk/http.js';
import {
  DEFAULT_RETRY_AFTER_SEC,
  MAX_RETRY_AFTER_SEC,
  parseReset,
  parseRetryAfter,
  rateLimitWait,
} from '../../providers/sdk/rate-limit.js';

const NOW = Date.UTC(2026, 11, 1, 10, 0, 0);
const headers = (h: Record<string, string>) => new Headers(h);

describe('rateLimitWait: when a provider answer is a rate limit, and for how long', () => {
  it('429 with Retry-After in delay-seconds and as an HTTP-date', () => {
    expect(rateLimitWait(429, headers({ 'retry-after': '7' }), NOW)).toBe(7);
    expect(rateLimitWait(429, headers({ 'retry-after': ' 0 ' }), NOW)).toBe(0);
    const in90s = new Date(NOW + 90_000).toUTCString();
    expect(rateLimitWait(429, headers({ 'retry-after': in90s }), NOW)).toBe(90);
    // A date already past means "now", not a negative wait.
    expect(rateLimitWait(429, headers({ 'retry-after': new Date(NOW - 5000).toUTCString() }), NOW)).toBe(0);
  });

  it("GitHub's primary limit: 403 or 429 with x-ratelimit-remaining: 0 and x-ratelimit-reset in epoch seconds", () => {
    const reset = String(Math.floor(NOW / 1000) + 42);
    expect(rateLimitWait(403, headers({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': reset }), NOW)).toBe(42);
    expect(rateLimitWait(429, headers({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': reset }), NOW)).toBe(42);
    // Retry-After wins when both are sent (GitHub's secondary limits).
    expect(rateLimitWait(403, headers({ 'retry-after': '3', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': reset }), NOW)).toBe(3);
    // A reset with requests left is just information.
    expect(rateLimitWait(403, headers({ 'x-ratelimit-remaining': '12', 'x-ratelimit-reset': reset }), NOW)).toBeUndefined();
  });

  it("Linear's reset in epoch milliseconds and Jira's ISO-8601 reset", () => {
    const linear = headers({ 'x-ratelimit-requests-remaining': '0', 'x-ratelimit-requests-reset': String(NOW + 30_000) });
    expect(rateLimitWait(429, linear, NOW)).toBe(30);
    expect(parseReset(new Date(NOW + 61_500).toISOString(), NOW)).toBe(62);
    expect(parseReset('15', NOW)).toBe(15);
  });

  it('403 and 503 without rate-limit headers are not rate limits; 503 with Retry-After is', () => {
    expect(rateLimitWait(403, headers({}), NOW)).toBeUndefined();
    expect(rateLimitWait(503, headers({}), NOW)).toBeUndefined();
    expect(rateLimitWait(503, headers({ 'retry-after': 'soon' }), NOW)).toBeUndefined();
    expect(rateLimitWait(503, headers({ 'retry-after': '20' }), NOW)).toBe(20);
    expect(rateLimitWait(500, headers({ 'retry-after': '20' }), NOW)).toBeUndefined();
    expect(rateLimitWait(200, headers({ 'x-ratelimit-remaining': '0' }), NOW)).toBeUndefined();
  });

  it('hostile headers: garbage, negative, fractional and absurd values fall back to the default or the cap', () => {
    for (const garbage of ['-5', '1.5', 'NaN', 'Infinity', '1e9', '', '0x10', 'Mon, 32 Foo 9999 GMT', 'x'.repeat(10_000)]) {
      expect(rateLimitWait(429, headers({ 'retry-after': garbage }), NOW)).toBe(DEFAULT_RETRY_AFTER_SEC);
    }
    expect(rateLimitWait(429, headers({ 'retry-after': '999999999999' }), NOW)).toBe(MAX_RETRY_AFTER_SEC);
    expect(rateLimitWait(429, headers({ 'retry-after': 'Fri, 31 Dec 9999 23:59:59 GMT' }), NOW)).toBe(MAX_RETRY_AFTER_SEC);
    expect(rateLimitWait(429, headers({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '-1' }), NOW)).toBe(DEFAULT_RETRY_AFTER_SEC);
    expect(rateLimitWait(429, headers({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '99999999999999999999' }), NOW)).toBe(
      DEFAULT_RETRY_AFTER_SEC,
    );
    expect(rateLimitWait(403, headers({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': 'tomorrow' }), NOW)).toBe(
      DEFAULT_RETRY_AFTER_SEC,
    );
    expect(parseRetryAfter('1', NOW)).toBe(1);
    expect(parseRetryAfter('2024', NOW)).toBe(2024);
    expect(parseRetryAfter('2024-01-01', NOW)).toBeUndefined();
  });

  it('every wait is a whole number of seconds in [0, the cap]', () => {
    const samples = ['0', '1', '59', '3600', '3601', new Date(NOW + 1).toUTCString(), new Date(NOW + 10 ** 10).toUTCString()];
    for (const value of samples) {
      const wait = rateLimitWait(429, headers({ 'retry-after': value }), NOW)!;
      expect(Number.isInteger(wait) && wait >= 0 && wait <= MAX_RETRY_AFTER_SEC).toBe(true);
    }
  });

  it('ProviderHttpError carries the wait; a 429 a tool throws by hand gets the default', () => {
    const res = new Response('{"message":"slow down"}', { status: 429, headers: { 'retry-after': '2' } });
    expect(ProviderHttpError.of(res, 'slow down').retryAfterSec).toBe(2);
    expect(new ProviderHttpError(429, 'busy').retryAfterSec).toBe(DEFAULT_RETRY_AFTER_SEC);
    expect(new ProviderHttpError(404, 'gone').retryAfterSec).toBeUndefined();
  });
});
