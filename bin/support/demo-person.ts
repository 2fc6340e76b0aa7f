import type { Page } from 'playwright-core';

/**
 * A person in chromium during README's first session (its test, and `npm run docs:screenshots`):
 * signs in to the portal with the link npm start printed, and answers the demo's pages.
 */

/** Opens the one-time portal sign-in link and clicks Sign in, as the README says. */
export async function signInWithLink(page: Page, link: string): Promise<void> {
  await page.goto(link);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => url.pathname === '/portal');
}

/**
 * Drives the demo authorization server's pages (demo/sign-in-and-consent.ts) as a person does:
 * signs in as `account` when it asks (a second connect in the same browser goes straight to
 * consent), then answers the consent page. Waits until the browser has left the demo's origin.
 */
export async function consentAtDemo(
  page: Page,
  demoOrigin: string,
  options: { account?: string; answer?: 'Allow' | 'Deny' } = {},
): Promise<void> {
  await page
    .waitForURL((url) => url.origin === demoOrigin, { timeout: 15_000 })
    .catch(async (err) => {
      throw new Error(`the connect link did not lead to the demo: ${page.url()}\n${await page.locator('body').textContent()}`, {
        cause: err,
      });
    });
  const signIn = page.getByRole('button', { name: 'Sign in' });
  const allow = page.getByRole('button', { name: 'Allow' });
  await signIn.or(allow).first().waitFor();
  if (await signIn.isVisible()) {
    if (options.account) await page.getByLabel('Demo account name').fill(options.account);
    await signIn.click();
  }
  await page.getByRole('button', { name: options.answer ?? 'Allow' }).click();
  await page.waitForURL((url) => url.origin !== demoOrigin, { timeout: 15_000 });
  await page.waitForLoadState();
}
