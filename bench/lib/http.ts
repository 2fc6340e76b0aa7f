/** POST /v1/tools/<tool> with an API key, abortable so a benchmark's deadline reaches requests in flight. */
export async function callTool(
  baseUrl: string,
  apiKey: string,
  tool: string,
  args: unknown,
  signal?: AbortSignal,
): Promise<{ status: number; body: any }> {
  const res = await fetch(`${baseUrl}/v1/tools/${tool}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(args),
    signal,
  });
  return { status: res.status, body: await res.json() };
}
