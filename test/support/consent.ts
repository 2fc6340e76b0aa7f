import type { Browser, Page } from 'playwright-core';
import type { ServiceContext } from '../../features/context.js';
import { csrfToken } from '../../surfaces/portal/csrf.js';
import type { TestAuthServer } from './oauth-server.js';
import type { TestUser } from './stack.js';

/** A fresh browser context signed in to the portal as `user`, through a one-time link. */
export async function signedInPage(browser: Browser, user: TestUser): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await signIn(page, user);
  return page;
}

/** Signs this page's browser context in to the portal as `user` (again), through a one-time link. */
export async function signIn(page: Page, user: TestUser): Promise<void> {
  await page.goto(await user.loginLink());
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/portal$/);
}

/** The portal's CSRF token for this signed-in browser (what its pages put in their forms). */
export async function csrfOfPage(ctx: ServiceContext, page: Page): Promise<string> {
  const session = (await page.context().cookies()).find((c) => c.name === 'sb_session')?.value ?? '';
  // A request as that browser sends it: the Cookie header, and the parsed cookies.
  return csrfToken(ctx, { headers: { cookie: `sb_session=${session}` }, cookies: { sb_session: session } } as never);
}

/**
 * Drives the test authorization server's login and consent pages as a human would, and waits
 * for the callback. Returns the callback URL (it holds the code and state, for leak checks).
 */
export async function consentAs(page: Page, auth: TestAuthServer, login: string): Promise<URL> {
  await page.waitForURL((url) => url.href.startsWith(auth.issuer));
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill('any password');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
  // The shared callback, or a discovered authorization server's own (/oauth/callback/<key>).
  await page.waitForURL((url) => url.pathname === '/oauth/callback' || url.pathname.startsWith('/oauth/callback/'));
  return new URL(page.url());
}
