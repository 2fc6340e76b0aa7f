/**
 * The shape of a 2026-07-28 request's `inputResponses` (multi round-trip requests): a map from the
 * keys of a previous `input_required` result to the client's answers, each a result object (an
 * elicitation's `{action, …}`, a sampling or roots result). The v2 SDK (2.4.0) lifts the field
 * without looking at it, so `inputResponses: null`, `5` or `{"k": 12345}` reached the tools as
 * "no answers" and the call ran as if nothing had been sent. The revision asks servers to validate
 * them and to answer a malformed request with a JSON-RPC error: this says what is wrong, or
 * undefined when the field is absent or well formed. Keys are not checked here: an answer to a key
 * that was not asked is ignored, as the revision says.
 */
export function malformedInputResponses(body: unknown): string | undefined {
  const params = (body as { params?: unknown } | null)?.params;
  if (!isPlainObject(params) || !('inputResponses' in params)) return undefined;
  const responses = params.inputResponses;
  if (!isPlainObject(responses)) return 'inputResponses must be an object mapping input request keys to responses';
  for (const [key, response] of Object.entries(responses)) {
    if (!isPlainObject(response)) return `inputResponses[${JSON.stringify(key.slice(0, 100))}] must be a response object`;
  }
  return undefined;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);
