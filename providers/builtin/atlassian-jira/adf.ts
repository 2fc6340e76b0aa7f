/**
 * Atlassian Document Format (https://developer.atlassian.com/cloud/jira/platform/apis/document/structure/):
 * Jira v3 takes and returns rich text as ADF. Tools accept and return plain text.
 */

export interface AdfNode {
  type: string;
  version?: number;
  text?: string;
  attrs?: Record<string, unknown>;
  content?: AdfNode[];
}

/** A minimal ADF document: blank-line-separated paragraphs, single newlines as hard breaks. */
export function textToAdf(text: string): AdfNode {
  const paragraphs = text
    .replace(/\r\n?/g, '\n')
    .split(/\n{2,}/)
    .filter((p) => p.trim().length > 0)
    .map((p) => ({
      type: 'paragraph',
      content: p.split('\n').flatMap((line, i): AdfNode[] => {
        const parts: AdfNode[] = i > 0 ? [{ type: 'hardBreak' }] : [];
        return line ? [...parts, { type: 'text', text: line }] : parts;
      }),
    }));
  return { type: 'doc', version: 1, content: paragraphs };
}

/** Blocks that end with a blank line, like paragraphs in plain text. */
const BLOCKS = new Set([
  'paragraph',
  'heading',
  'blockquote',
  'codeBlock',
  'panel',
  'rule',
  'mediaSingle',
  'bulletList',
  'orderedList',
  'table',
]);

/**
 * Block formatting is kept this many levels deep; below it a node's text is taken as it is. Each
 * level trims (copies) all the text under it, so a document nested N levels cost N copies of its
 * text — 5,000 levels of a Jira answer took 5.5 s of the worker — and recursing deeper than the
 * stack overflows. Real documents (lists in lists, tables in panels) stay within a few levels.
 */
export const ADF_FORMATTED_DEPTH = 16;

/** Plain text of an ADF document (or null): text, mentions and emoji; blank lines between blocks. */
export function adfToText(node: AdfNode | null | undefined): string | null {
  if (!node) return null;
  const walk = (n: AdfNode, depth: number): string => {
    const leaf = leafText(n);
    if (leaf !== undefined) return leaf;
    if (depth >= ADF_FORMATTED_DEPTH) return flatText(n);
    const inner = (n.content ?? []).map((child) => walk(child, depth + 1)).join('');
    if (n.type === 'listItem') return `- ${inner.trim()}\n`;
    if (n.type === 'tableRow') return `${inner.trim()}\n`;
    if (n.type === 'tableCell' || n.type === 'tableHeader') return `${inner.trim()} | `;
    return BLOCKS.has(n.type) ? `${inner.trimEnd()}\n\n` : inner;
  };
  return walk(node, 0)
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** The text of a node that has no content of its own to walk (text, a break, a mention…), else undefined. */
function leafText(n: AdfNode): string | undefined {
  if (n.type === 'text') return n.text ?? '';
  if (n.type === 'hardBreak') return '\n';
  if (n.type === 'mention' || n.type === 'emoji' || n.type === 'status' || n.type === 'date') {
    return String(n.attrs?.text ?? n.attrs?.shortName ?? n.attrs?.timestamp ?? '');
  }
  if (n.type === 'inlineCard' || n.type === 'blockCard') return String(n.attrs?.url ?? '');
  return undefined;
}

/** The text under a node in document order, without formatting: a loop (no recursion), one pass. */
function flatText(node: AdfNode): string {
  const parts: string[] = [];
  const stack: AdfNode[] = [node];
  while (stack.length) {
    const n = stack.pop()!;
    const leaf = leafText(n);
    if (leaf !== undefined) parts.push(leaf);
    else if (Array.isArray(n.content)) for (let i = n.content.length - 1; i >= 0; i--) stack.push(n.content[i]);
  }
  return parts.join('');
}
