/**
 * The notice a portal page shows after one of its own redirects (`?done=<key>`). Only the page's
 * own keys count: `?done=constructor` (or any name an object inherits) shows nothing.
 */
export function noticeFor(notices: Readonly<Record<string, string>>, done: unknown): string | undefined {
  return typeof done === 'string' && Object.hasOwn(notices, done) ? notices[done] : undefined;
}
