import type { CDPSession, Page } from 'playwright-core';
import type { Screenshot } from '../../core/ports/browser-engine.js';
import { VIEWPORT } from './blank-pages.js';
import type { Guard } from './first-failure.js';

/** A full-page screenshot covers at most this many CSS pixels of height. */
const FULL_PAGE_MAX_HEIGHT = 6000;
/** Widths and JPEG qualities tried in turn until the image fits the result cap. */
const SCREENSHOT_LADDER: readonly [width: number, quality: number][] = [
  [800, 50],
  [800, 35],
  [640, 35],
  [512, 30],
  [400, 30],
  [320, 25],
  [240, 20],
];

/** Width and height of a JPEG, from its SOF marker. */
function jpegSize(data: Buffer): { width: number; height: number } | undefined {
  let i = 2;
  while (i + 9 < data.length) {
    if (data[i] !== 0xff) return undefined;
    const marker = data[i + 1];
    const length = data.readUInt16BE(i + 2);
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: data.readUInt16BE(i + 5), width: data.readUInt16BE(i + 7) };
    }
    i += 2 + length;
  }
  return undefined;
}

/** CSS pixels of height to capture: the viewport, or the whole page up to FULL_PAGE_MAX_HEIGHT. */
export async function screenshotHeight(page: Page, guard: Guard, fullPage: boolean): Promise<number> {
  if (!fullPage) return VIEWPORT.height;
  const scrollHeight = await guard(
    page.evaluate(() => Math.max(document.documentElement?.scrollHeight ?? 0, document.body?.scrollHeight ?? 0)),
  );
  return Math.min(FULL_PAGE_MAX_HEIGHT, Math.max(VIEWPORT.height, scrollHeight));
}

/**
 * A JPEG of the page's top `cssHeight` pixels that fits in `maxResultBytes` as a tool result:
 * smaller widths and qualities are tried in turn until one does (SCREENSHOT_LADDER).
 */
export async function fittingScreenshot(
  cdp: CDPSession,
  guard: Guard,
  input: { url: string; cssHeight: number; fullPage: boolean; maxResultBytes: number },
): Promise<Screenshot> {
  const { url, cssHeight, fullPage, maxResultBytes } = input;
  const envelope = { url, mimeType: 'image/jpeg' as const, width: 99999, height: 99999, quality: 100, fullPage, data: '' };
  const budget = maxResultBytes - Buffer.byteLength(JSON.stringify(envelope)) - 16;
  for (const [width, quality] of SCREENSHOT_LADDER) {
    const shot = await guard(
      cdp.send('Page.captureScreenshot', {
        format: 'jpeg',
        quality,
        clip: { x: 0, y: 0, width: VIEWPORT.width, height: cssHeight, scale: width / VIEWPORT.width },
        captureBeyondViewport: fullPage,
      }),
    );
    if (shot.data.length > budget) continue;
    const size = jpegSize(Buffer.from(shot.data, 'base64')) ?? {
      width,
      height: Math.round((cssHeight * width) / VIEWPORT.width),
    };
    return { url, mimeType: 'image/jpeg', ...size, quality, fullPage, data: shot.data };
  }
  throw new Error(
    `The screenshot does not fit in ${maxResultBytes} bytes (CONNECTIONS_TOOL_RESULT_MAX_BYTES) even at ${SCREENSHOT_LADDER.at(-1)![0]} px wide${fullPage ? '; try without fullPage' : ''}.`,
  );
}
