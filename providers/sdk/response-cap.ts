import { ResponseTooLarge } from './http.js';

/** What a provider response may weigh when the operator sets nothing (CONNECTIONS_PROVIDER_RESPONSE_MAX_BYTES). */
export const DEFAULT_RESPONSE_MAX_BYTES = 10 * 1024 * 1024;

/**
 * The response with a body that stops at `maxBytes`: whoever reads it (text, json, arrayBuffer)
 * gets a ResponseTooLarge as soon as the count passes the cap, and the upstream stream is
 * cancelled, so the connection closes instead of being drained into memory. A declared
 * Content-Length over the cap is refused before anything is read.
 */
export function capResponse(res: Response, maxBytes: number): Response {
  if (!res.body) return res;
  const length = res.headers.get('content-length');
  const declared = length !== null && /^\s*\d+\s*$/.test(length) ? Number(length) : Number.NaN;
  if (declared > maxBytes) {
    void res.body.cancel().catch(() => {});
    throw new ResponseTooLarge(maxBytes);
  }
  // A declared length within the cap, on a body that is not decoded on the way in, is all there
  // is to read (the HTTP parser reads exactly Content-Length bytes of body): no counting stream
  // needed. A compressed body's declared length is the compressed one, so it is still counted.
  if (declared >= 0 && isIdentity(res.headers.get('content-encoding'))) return res;
  let seen = 0;
  const limited = res.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        // Erroring the writable side makes pipeThrough cancel the source: the socket is let go.
        if (seen > maxBytes) controller.error(new ResponseTooLarge(maxBytes));
        else controller.enqueue(chunk);
      },
    }),
  );
  const capped = new Response(limited, { status: res.status, statusText: res.statusText, headers: res.headers });
  Object.defineProperty(capped, 'url', { value: res.url });
  return capped;
}

const isIdentity = (encoding: string | null) => encoding === null || encoding.trim() === '' || encoding.trim().toLowerCase() === 'identity';
