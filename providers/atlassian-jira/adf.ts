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

/** Plain text of an ADF document (or null): text, mentions and emoji; blank lines between blocks. */
export function adfToText(node: AdfNode | null | undefined): string | null {
  if (!node) return null;
  const walk = (n: AdfNode): string => {
    if (n.type === 'text') return n.text ?? '';
    if (n.type === 'hardBreak') return '\n';
    if (n.type === 'mention' || n.type === 'emoji' || n.type === 'status' || n.type === 'date') {
      return String(n.attrs?.text ?? n.attrs?.shortName ?? n.attrs?.timestamp ?? '');
    }
    if (n.type === 'inlineCard' || n.type === 'blockCard') return String(n.attrs?.url ?? '');
    const inner = (n.content ?? []).map(walk).join('');
    if (n.type === 'listItem') return `- ${inner.trim()}\n`;
    if (n.type === 'tableRow') return `${inner.trim()}\n`;
    if (n.type === 'tableCell' || n.type === 'tableHeader') return `${inner.trim()} | `;
    return BLOCKS.has(n.type) ? `${inner.trimEnd()}\n\n` : inner;
  };
  return walk(node)
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
