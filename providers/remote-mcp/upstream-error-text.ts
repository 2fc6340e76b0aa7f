/**
 * An upstream's JSON-RPC error as one sentence. The MCP SDK prefixes its error's message with
 * "MCP error <code>: ", and servers that are themselves built on an SDK (or proxy another server)
 * send a message that already carries one or more such prefixes: said once, the code is enough.
 */
const SDK_PREFIXES = /^(?:\s*MCP error -?\d+:)+\s*/;

export function upstreamErrorText(code: number, message: string): string {
  const said = message.replace(SDK_PREFIXES, '').trim();
  return `the upstream MCP server answered error ${code}${said ? `: ${said}` : ''}`;
}
