/**
 * Keeping results and error text safe for a model's context: a byte cap cut at a character
 * boundary, and the caller's secrets replaced before anyone reads the text. Pure code.
 */

export const REDACTED = '[redacted]';
export const ERROR_TEXT_MAX_CHARS = 300;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Cuts UTF-8 `text` to at most `maxBytes` bytes without splitting a character. */
export function cutUtf8(text: string, maxBytes: number): string {
  const bytes = encoder.encode(text);
  if (bytes.length <= maxBytes) return text;
  let end = maxBytes;
  // Step back over continuation bytes (10xxxxxx) to the start of the character that straddles the cut.
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--;
  return decoder.decode(bytes.subarray(0, end));
}

/**
 * A result over `maxBytes` (as JSON) becomes its JSON text cut at a character boundary, with
 * the original size; a smaller one passes through unchanged.
 */
export function limitResult(result: unknown, maxBytes: number): { result: unknown; truncated?: true; originalBytes?: number } {
  const json = JSON.stringify(result) ?? 'null';
  const originalBytes = encoder.encode(json).length;
  if (originalBytes <= maxBytes) return { result };
  return { result: cutUtf8(json, maxBytes), truncated: true, originalBytes };
}

/** Replaces every occurrence of each secret (ignoring short ones that would mangle text). */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret && secret.length >= 6) out = out.split(secret).join(REDACTED);
  return out;
}

/**
 * The ways a service may echo a secret back in its error text: as sent, URL-encoded (a query
 * string, a form), and base64 or base64url (a Basic `Authorization` header, `user:token`). For
 * base64 inside a longer encoded text the secret may start at any of three byte offsets; each
 * offset's form keeps only the characters that encode the secret's bytes alone.
 */
export function secretForms(secret: string): string[] {
  const forms = new Set([secret, encodeURIComponent(secret), encodeURIComponent(secret).replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase())]);
  const bytes = encoder.encode(secret);
  for (let offset = 0; offset < 3; offset++) {
    const encoded = btoa(String.fromCharCode(...new Uint8Array(offset), ...bytes)).replace(/=+$/, '');
    const start = Math.ceil((offset * 8) / 6);
    const end = Math.floor(((offset + bytes.length) * 8) / 6);
    const core = encoded.slice(start, end);
    forms.add(core);
    forms.add(core.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  // Longest first, so a form that contains another is replaced whole.
  return [...forms].sort((a, b) => b.length - a.length);
}

/** Provider error text for a model: redacted first (so a cut never leaves half a token), then cut. */
export function providerErrorText(text: string, secrets: readonly string[]): string {
  const clean = redact(text, secrets.filter((s) => s.length >= 6).flatMap(secretForms))
    .replace(/\s+/g, ' ')
    .trim();
  const chars = [...clean];
  // Cut by characters (code points), never between the two halves of a surrogate pair.
  return chars.length > ERROR_TEXT_MAX_CHARS ? `${chars.slice(0, ERROR_TEXT_MAX_CHARS - 1).join('')}…` : clean;
}
