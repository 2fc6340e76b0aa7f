import type { Response } from 'express';

/**
 * Widens `form-action` of this one response's Content-Security-Policy to `origins`, for a page
 * whose form ends in a redirect to another site (a provider's consent page): Chromium applies
 * form-action to every redirect of a form submission, so helmet's `'self'` would block it.
 * Every other directive stays exactly as helmet set it.
 */
export function allowFormActionTo(res: Response, origins: Iterable<string>): void {
  const extra = [...new Set(origins)].filter((o) => /^https?:\/\/[^\s;,'"]+$/.test(o));
  const current = res.getHeader('content-security-policy');
  if (typeof current !== 'string' || extra.length === 0) return;
  const directives = current.split(';').map((d) => d.trim());
  const widened = directives.map((d) => (/^form-action\s/i.test(d) ? `${d} ${extra.join(' ')}` : d));
  res.setHeader('content-security-policy', widened.join(';'));
}
