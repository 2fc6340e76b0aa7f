/**
 * A tool's answer as an MCP CallToolResult: the JSON body as text and, for an object, as
 * structuredContent too; `isError` for refusals and failures. Direct calls and tasks answer alike.
 */
export function callToolResult(body: unknown, isError: boolean) {
  return {
    content: [{ type: 'text' as const, text: JSON.stringify(body) }],
    ...(body !== null && typeof body === 'object' && !Array.isArray(body) ? { structuredContent: body as Record<string, unknown> } : {}),
    ...(isError ? { isError: true } : {}),
  };
}
