/**
 * What a `tools/call` answer becomes: structured content when the server sent it; else the text
 * (one text part: the string; several: joined by newlines); else typed parts, so images and
 * resources survive as what they are. An `isError` answer is an UpstreamToolError with its text.
 */

export class UpstreamToolError extends Error {
  readonly code = 'upstream_tool_error';
  constructor(readonly text: string) {
    super(text || 'the upstream tool reported an error without text');
    this.name = 'UpstreamToolError';
  }
}

interface ContentPart {
  type: string;
  text?: string;
  [key: string]: unknown;
}

export interface CallToolAnswer {
  content?: ContentPart[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  toolResult?: unknown;
}

/** A part as kept in a result: text, image/audio (mime type + base64), resource, resource link. */
function typedPart(part: ContentPart): Record<string, unknown> {
  switch (part.type) {
    case 'text':
      return { type: 'text', text: String(part.text ?? '') };
    case 'image':
    case 'audio':
      return { type: part.type, mimeType: part.mimeType, data: part.data };
    case 'resource':
      return { type: 'resource', resource: part.resource };
    case 'resource_link':
      return { type: 'resource_link', uri: part.uri, name: part.name, mimeType: part.mimeType, description: part.description };
    default:
      return { type: String(part.type) };
  }
}

export function toolResultOf(answer: CallToolAnswer): unknown {
  const content = Array.isArray(answer.content) ? answer.content : [];
  const texts = content.filter((p) => p?.type === 'text').map((p) => String(p.text ?? ''));
  if (answer.isError) throw new UpstreamToolError(texts.join('\n'));
  if (answer.structuredContent && typeof answer.structuredContent === 'object') return answer.structuredContent;
  // A server speaking the 2024-10-07 revision answers `toolResult`.
  if (!content.length && 'toolResult' in answer) return answer.toolResult;
  if (texts.length === content.length) return texts.length === 1 ? texts[0] : texts.join('\n');
  return content.map(typedPart);
}
