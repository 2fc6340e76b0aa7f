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

/** A provider answered more bytes than CONNECTIONS_PROVIDER_RESPONSE_MAX_BYTES; reading stopped there. */
export class ResponseTooLarge extends Error {
  readonly code = 'response_too_large';
  constructor(readonly maxBytes: number) {
    super(`The provider's response was larger than ${maxBytes} bytes; Switchboard stopped reading it`);
    this.name = 'ResponseTooLarge';
  }
}
