import type { Page } from 'playwright-core';
import type { PageLink } from '../../core/ports/browser-engine.js';
import type { Guard } from './first-failure.js';

interface RenderedPage {
  title: string;
  /** The rendered text, cut at maxChars. */
  text: string;
  textLength: number;
  links: PageLink[];
  linkCount: number;
}

/** What a reader sees on the page: its title, rendered text (cut at maxChars) and distinct http(s) links (at most maxLinks). */
export function readPage(page: Page, guard: Guard, limits: { maxChars: number; maxLinks: number }): Promise<RenderedPage> {
  return guard(
    page.evaluate(
      ({ maxChars, maxLinks }) => {
        // Rendered text: what a reader sees, without scripts, styles or hidden elements.
        // biome-ignore lint/performance/useDomNodeTextContent: the rendered text is the point
        const text = (document.body?.innerText ?? document.documentElement?.textContent ?? '')
          .replace(/[ \t]+\n/g, '\n')
          .replace(/\n{3,}/g, '\n\n')
          .trim();
        let cut = text.slice(0, maxChars);
        // Never end on half a surrogate pair.
        if (cut.length && /[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1);
        const seen = new Set<string>();
        const links: { text: string; href: string }[] = [];
        for (const a of Array.from(document.querySelectorAll('a[href]'))) {
          const href = (a as HTMLAnchorElement).href;
          if (!/^https?:/i.test(href) || seen.has(href)) continue;
          seen.add(href);
          if (links.length < maxLinks) {
            // biome-ignore lint/performance/useDomNodeTextContent: the rendered text is the point
            const label = ((a as HTMLElement).innerText || a.getAttribute('aria-label') || a.getAttribute('title') || '')
              .replace(/\s+/g, ' ')
              .trim();
            links.push({ text: label.slice(0, 200), href });
          }
        }
        return { title: document.title, text: cut, textLength: text.length, links, linkCount: seen.size };
      },
      { maxChars: limits.maxChars, maxLinks: limits.maxLinks },
    ),
  );
}
