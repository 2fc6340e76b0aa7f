/** An HTTP error from a provider's API, with its status and (untrusted) body text. */
export class ProviderHttpError extends Error {
  readonly code = 'provider_http_error';
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`provider answered HTTP ${status}`);
    this.name = 'ProviderHttpError';
  }
}

/** Reads a JSON body, turning a non-2xx answer into a ProviderHttpError. */
export async function readJson(res: Response): Promise<unknown> {
  const text = await res.text();
  if (!res.ok) throw new ProviderHttpError(res.status, text);
  return text.length ? JSON.parse(text) : null;
}
