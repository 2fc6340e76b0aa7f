import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CatalogRanker, RANKING } from '../../features/catalog/catalog-ranker.js';
import { ProviderRegistry } from '../../providers/registry.js';
import { defineProvider, defineTool } from '../../providers/sdk/index.js';

const tool = (name: string, description: string) =>
  defineTool({ name, description, access: 'read', input: z.object({}), run: async () => ({}) });
const browser = defineProvider(
  {
    name: 'webdriver',
    version: '1.0.0',
    displayName: 'Web driver',
    description: 'Drives a web browser',
    auth: 'none',
    envPrefix: 'WEBDRIVER',
    toolPrefix: 'webdriver',
  },
  [
    tool('browser_navigate', 'Navigate to a URL'),
    tool('browser_navigate_back', 'Navigate to the previous URL in history'),
    tool('browser_click', 'Click an element on the page'),
    tool('browser_type', 'Type text into an element on the page'),
    tool('browser_hover', 'Hover over an element on the page'),
  ],
);
const ranker = () => new CatalogRanker(new ProviderRegistry([browser]).tools());
const top = (r: CatalogRanker, query: string) => r.query(query, { limit: 3 }).map((h) => h.entry.qualifiedName);

describe('catalog ranker', () => {
  it('prefers the tool whose distinguishing name words the request says, not more', () => {
    // Both descriptions say "navigate to … URL"; only `navigate_back` has a word ("back") not asked for.
    expect(top(ranker(), 'navigate to the URL')[0]).toBe('webdriver__browser_navigate');
    const [first] = ranker().query('navigate to the URL', { limit: 1 });
    // `browser` is in every tool's name and tells none apart: `navigate` alone is the name to cover,
    // so the match earns RANKING.coverage on top of its text and integration score.
    expect(first.score).toBeCloseTo(first.parts.text * (1 + RANKING.coverage) + RANKING.named * first.parts.integration, 5);
    const back = ranker()
      .query('navigate to the URL', { limit: 5 })
      .find((h) => h.entry.qualifiedName === 'webdriver__browser_navigate_back');
    expect(back && back.score - back.parts.text - RANKING.named * back.parts.integration).toBeCloseTo(
      (RANKING.coverage / 2) * (back?.parts.text ?? 0),
      5,
    );
  });

  it('is deterministic: the same query, the same order', () => {
    const first = top(ranker(), 'click the element');
    for (let i = 0; i < 3; i++) expect(top(ranker(), 'click the element')).toEqual(first);
    expect(first[0]).toBe('webdriver__browser_click');
  });
});
