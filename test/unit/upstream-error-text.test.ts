import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { upstreamErrorText } from '../../providers/remote-mcp/upstream-error-text.js';

describe("an upstream's JSON-RPC error", () => {
  it('names the code once, however many SDK prefixes the message carries', () => {
    // What a server built on the SDK sends for a thrown error, wrapped again by our SDK client.
    const nested = new McpError(-32603, new McpError(-32603, 'page.goto: net::ERR_NAME_NOT_RESOLVED').message);
    expect(nested.message).toBe('MCP error -32603: MCP error -32603: page.goto: net::ERR_NAME_NOT_RESOLVED');
    expect(upstreamErrorText(nested.code, nested.message)).toBe(
      'the upstream MCP server answered error -32603: page.goto: net::ERR_NAME_NOT_RESOLVED',
    );
  });

  it('keeps a message that only mentions an error code later, and says nothing more for an empty one', () => {
    expect(upstreamErrorText(-32602, 'Invalid params: MCP error -1: is not a prefix here')).toBe(
      'the upstream MCP server answered error -32602: Invalid params: MCP error -1: is not a prefix here',
    );
    expect(upstreamErrorText(-32000, new McpError(-32000, '').message)).toBe('the upstream MCP server answered error -32000');
  });
});
