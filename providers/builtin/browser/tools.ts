import { z } from 'zod';
import type { BrowserEngine } from '../../../core/ports/browser-engine.js';
import { defineTool, type ToolContext } from '../../sdk/index.js';

const url = z
  .url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL (other schemes, such as file: and ftp:, are refused)' })
  .max(2048)
  .describe('Address of the page, http:// or https://, e.g. "https://example.com/docs"');

function engineOf(ctx: ToolContext): BrowserEngine {
  const engine = ctx.services?.browser;
  if (!engine) throw new Error('The browser is not available in this process.');
  return engine;
}

const REFUSALS =
  'Only public addresses: loopback, private, link-local and cloud metadata addresses are refused (after DNS and after every redirect) unless the operator allowed the host.';

export const browserTools = [
  defineTool({
    name: 'open_page',
    description: `Open a web page in a headless browser (scripts run) and return its readable text and links: {url (after redirects), status, title, text, textLength, truncated, links: [{text, href}], linkCount, blockedRequests}. text is cut at maxChars (default 20000); links at maxLinks (default 50). ${REFUSALS} Pages must load within the browser's time limit (15 s by default) and size limit (5 MB per response by default). Use extract for specific elements, screenshot to see the page.`,
    access: 'read',
    input: z.object({
      url,
      maxChars: z.number().int().min(100).max(100_000).default(20_000).describe('Most characters of page text to return (default 20000)'),
      maxLinks: z
        .number()
        .int()
        .min(0)
        .max(500)
        .default(50)
        .describe('Most links to return (default 50); linkCount tells how many there are'),
    }),
    async run(args, ctx) {
      return engineOf(ctx).openPage(args, ctx.signal, ctx.caller);
    },
  }),
  defineTool({
    name: 'screenshot',
    description: `Take a screenshot of a web page in a 1280x800 browser window and return it as a JPEG: {url, mimeType: "image/jpeg", width, height, quality, fullPage, data (base64)}. To fit the tool result size limit (32 kB by default) the image is 800 px wide at JPEG quality 50, and smaller (down to 240 px) or lower quality when the page needs it. fullPage captures the whole page height (up to 6000 px of page) instead of the first screen. ${REFUSALS}`,
    access: 'read',
    input: z.object({
      url,
      fullPage: z
        .boolean()
        .default(false)
        .describe('true: the whole scrolling page (up to 6000 px tall); false: the first 1280x800 screen'),
    }),
    async run(args, ctx) {
      return engineOf(ctx).screenshot(args, ctx.signal, ctx.caller);
    },
  }),
  defineTool({
    name: 'extract',
    description: `Open a web page and return the elements matching a CSS selector: {url, selector, count, items: [{text, value?}]}. text is each element's visible text; with attribute, value is that attribute (href and src as absolute URLs, null when missing). Waits up to 3 s for the first match on pages that render with scripts. limit defaults to 20 (max 200); count is how many elements matched. ${REFUSALS}`,
    access: 'read',
    input: z.object({
      url,
      selector: z.string().min(1).max(1000).describe('CSS selector, e.g. "h2", "table.prices td", "a[href$=\'.pdf\']"'),
      attribute: z
        .string()
        .regex(/^[^\s"'>/=]{1,100}$/, 'expected an attribute name')
        .optional()
        .describe('Attribute to read from each element, e.g. "href" or "data-id"; omit for text only'),
      limit: z.number().int().min(1).max(200).default(20).describe('Most elements to return (default 20)'),
    }),
    async run(args, ctx) {
      return engineOf(ctx).extract(args, ctx.signal, ctx.caller);
    },
  }),
];
