import { type Browser, chromium } from 'playwright-core';
import { findChromium, QUIET_CHROMIUM_ARGS } from '../../platform/browser/chromium.js';

/** Debian's chromium driven by playwright-core, with the flags Switchboard's own browsers use (plus a test's `extraArgs`). */
export async function launchBrowser(extraArgs: string[] = []): Promise<Browser> {
  const executablePath = findChromium(process.env.CHROMIUM_PATH);
  if (!executablePath) throw new Error('chromium is not installed: run the tests with `npm test`, which installs it');
  return chromium.launch({ executablePath, headless: true, args: [...QUIET_CHROMIUM_ARGS, ...extraArgs] });
}
