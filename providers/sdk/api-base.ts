/**
 * The one place a tool's request may go: the provider's API base URL (origin and path prefix).
 * Tools and upstream answers (a redirect's Location, a pagination link) can only name URLs;
 * whether the request is sent, with the credential, is decided here on the URL as `fetch`
 * will send it, after `.`/`..` and `%2e` segments and backslashes have been resolved.
 */

import { hiddenTraversal } from './url-path.js';

/** A request the tool context refused because its URL is outside the provider's API base. */
export class OutsideApiBase extends Error {
  readonly code = 'outside_api_base';
  constructor(
    readonly url: string,
    readonly base: string,
  ) {
    super(`Switchboard refused to send a request to ${url}: it is outside the provider's API base ${base}`);
    this.name = 'OutsideApiBase';
  }
}

/** The parsed base, its path without a trailing slash ('' for the host's root). */
export function parseApiBase(apiBaseUrl: string): { url: URL; path: string } {
  const url = new URL(apiBaseUrl);
  return { url, path: url.pathname.replace(/\/+$/, '') };
}

/**
 * True when `url` has the base's origin, its normalised path is the base path or below it, and no
 * segment below the base is an encoded `..`, `/` or `\` that a proxy or server decoding once more
 * (or stripping `;params`) would resolve to a path outside it.
 */
export function isInsideApiBase(url: URL, base: { url: URL; path: string }): boolean {
  if (url.origin !== base.url.origin || url.username || url.password) return false;
  if (!(base.path === '' || url.pathname === base.path || url.pathname.startsWith(`${base.path}/`))) return false;
  return url.pathname
    .slice(base.path.length)
    .split('/')
    .every((segment) => segment === '' || hiddenTraversal(segment) === undefined);
}

/**
 * The absolute URL for `pathOrUrl` (a path below the base, or an absolute URL such as a link an
 * upstream answer gave), or OutsideApiBase when it would leave the base.
 */
export function resolveInsideApiBase(pathOrUrl: string, apiBaseUrl: string): URL {
  const base = parseApiBase(apiBaseUrl);
  const absolute = /^[a-z][a-z0-9+.-]*:/i.test(pathOrUrl);
  const text = absolute ? pathOrUrl : `${base.url.origin}${base.path}${pathOrUrl.startsWith('/') ? '' : '/'}${pathOrUrl}`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new OutsideApiBase(pathOrUrl, apiBaseUrl);
  }
  if (!isInsideApiBase(url, base)) throw new OutsideApiBase(`${url.origin}${url.pathname}`, apiBaseUrl);
  return url;
}
