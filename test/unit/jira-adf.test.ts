import { describe, expect, it } from 'vitest';
import { ADF_FORMATTED_DEPTH, type AdfNode, adfToText } from '../../providers/builtin/atlassian-jira/adf.js';

/**
 * Jira answers rich text as ADF, turned into text on the worker's event loop. Each formatted level
 * copies the text under it (trim), so nesting is formatted ADF_FORMATTED_DEPTH levels deep and taken
 * as plain text below: the work is the text times at most that depth, and no depth overflows the stack.
 */
const nestedList = (levels: number, leaf = 'deepest'): AdfNode => {
  let node: AdfNode = { type: 'paragraph', content: [{ type: 'text', text: leaf }] };
  for (let i = 0; i < levels; i++) node = { type: 'listItem', content: [{ type: 'text', text: `L${levels - i} ` }, node] };
  return { type: 'doc', version: 1, content: [node] };
};

describe('Jira ADF to text, bounded by depth', () => {
  it('formats nesting up to ADF_FORMATTED_DEPTH levels, and keeps the text below it unformatted', () => {
    const text = adfToText(nestedList(ADF_FORMATTED_DEPTH + 4))!;
    // The doc is level 0: its first ADF_FORMATTED_DEPTH - 1 list items are formatted as "- ".
    expect(text.match(/- /g)).toHaveLength(ADF_FORMATTED_DEPTH - 1);
    for (let i = 1; i <= ADF_FORMATTED_DEPTH + 4; i++) expect(text).toContain(`L${i} `);
    expect(text.endsWith('deepest')).toBe(true);
  });

  it('reads a document nested 100,000 levels deep (a recursive walk overflowed the stack) with all its text', () => {
    const text = adfToText(nestedList(100_000, 'still here'))!;
    expect(text).toContain('L100000 ');
    expect(text.endsWith('still here')).toBe(true);
  });

  it('keeps the shapes of ordinary documents', () => {
    const doc: AdfNode = {
      type: 'doc',
      content: [
        {
          type: 'paragraph',
          content: [{ type: 'text', text: 'Hello' }, { type: 'hardBreak' }, { type: 'mention', attrs: { text: '@jo' } }],
        },
        { type: 'bulletList', content: [{ type: 'listItem', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'one' }] }] }] },
      ],
    };
    expect(adfToText(doc)).toBe('Hello\n@jo\n\n- one');
  });
});
