import type { Page } from 'playwright-core';
import type { ExtractedItem } from '../../core/ports/browser-engine.js';
import type { Guard } from './first-failure.js';
import { SETTLE_MAX_MS } from './page-settle.js';

const TEXT_PER_ITEM = 2000;

/** Content that scripts add: waits a little (within the call's deadline) for the selector's first match. */
export async function waitForFirstMatch(page: Page, guard: Guard, selector: string, deadline: number): Promise<void> {
  const wait = Math.min(SETTLE_MAX_MS, deadline - Date.now() - 500);
  if (wait <= 0) return;
  await guard(
    page
      .waitForFunction(
        (selector) => {
          try {
            return document.querySelector(selector) !== null;
          } catch {
            return true;
          }
        },
        selector,
        { timeout: wait, polling: 200 },
      )
      .catch(() => undefined),
  );
}

/**
 * The elements matching a CSS selector: each one's visible text and, when asked, an attribute
 * (URL attributes made absolute), at most `limit` of them; `invalid` when the selector is not CSS.
 */
export function extractElements(
  page: Page,
  guard: Guard,
  input: { selector: string; attribute?: string; limit: number },
): Promise<{ invalid: true } | { invalid: false; count: number; items: ExtractedItem[] }> {
  return guard(
    page.evaluate(
      ({ selector, attribute, limit, perItem }) => {
        let nodes: Element[];
        try {
          nodes = Array.from(document.querySelectorAll(selector));
        } catch {
          return { invalid: true as const };
        }
        const urlAttributes = new Set(['href', 'src', 'action', 'poster', 'cite']);
        const items = nodes.slice(0, limit).map((el) => {
          // biome-ignore lint/performance/useDomNodeTextContent: the rendered text is the point
          const text = ((el as HTMLElement).innerText ?? el.textContent ?? '').replace(/\s+/g, ' ').trim().slice(0, perItem);
          if (!attribute) return { text };
          let value = el.getAttribute(attribute);
          if (value !== null && urlAttributes.has(attribute.toLowerCase())) {
            try {
              value = new URL(value, document.baseURI).href;
            } catch {
              // keep the raw value
            }
          }
          return { text, value: value === null ? null : value.slice(0, perItem) };
        });
        return { invalid: false as const, count: nodes.length, items };
      },
      { selector: input.selector, attribute: input.attribute, limit: input.limit, perItem: TEXT_PER_ITEM },
    ),
  );
}
