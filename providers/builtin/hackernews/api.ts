import { ProviderHttpError } from '../../sdk/http.js';
import type { Credential, ToolContext } from '../../sdk/index.js';
import { htmlToText, PAGE_MAX_CHARS, signedInUser } from './html.js';

/** The account name in HN's session cookie (`user=<name>&<hash>`), when the bundle has one. */
export function cookieUser(credential: Credential): string | undefined {
  if (credential.type !== 'cookie') return undefined;
  const value = credential.cookies.find((c) => c.name === 'user')?.value;
  const name = value ? decodeURIComponent(value).split('&')[0] : '';
  return /^[A-Za-z0-9_-]{1,32}$/.test(name) ? name : undefined;
}

/**
 * One page fetched with the session. HN answers a dead session with the signed-out page (200),
 * not a 401, so a page without the top bar's `me` link is turned into a 401 here: Switchboard
 * then marks the account needs_reauth.
 */
export async function hnPage(ctx: ToolContext, path: string, init: RequestInit = {}): Promise<{ page: string; me: string }> {
  const res = await ctx.fetch(path, { redirect: 'manual', ...init, headers: { accept: 'text/html', ...init.headers } });
  const page = await res.text();
  const location = res.headers.get('location') ?? '';
  if (res.status >= 300 && res.status < 400 && /(^|\/)login\b/.test(location)) {
    throw new ProviderHttpError(401, 'Hacker News asked to sign in again');
  }
  if (!res.ok) throw ProviderHttpError.of(res, htmlToText(page.slice(0, PAGE_MAX_CHARS)).slice(0, 300));
  const me = signedInUser(page);
  if (!me) throw new ProviderHttpError(401, 'Hacker News does not know this session any more (signed out or expired)');
  return { page, me };
}

/** The signed-in user's name: from the cookie when it says, else from the front page's top bar. */
export async function whoami(ctx: ToolContext): Promise<string> {
  return cookieUser(ctx.credential) ?? (await hnPage(ctx, '/news')).me;
}

export const userPath = (name: string) => `/user?id=${encodeURIComponent(name)}`;
