/**
 * Keeping results and error text safe for a model's context: a byte cap cut at a character
 * boundary, and the caller's secrets replaced before anyone reads the text. Pure code.
 */

export const REDACTED = '[redacted]';
const ERROR_TEXT_MAX_CHARS = 300;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Cuts UTF-8 `text` to at most `maxBytes` bytes without splitting a character. */
export function cutUtf8(text: string, maxBytes: number): string {
  return cutEncoded(encoder.encode(text), maxBytes) ?? text;
}

/** The text of `bytes` cut to at most `maxBytes` without splitting a character; undefined when it fits. */
function cutEncoded(bytes: Uint8Array, maxBytes: number): string | undefined {
  if (bytes.length <= maxBytes) return undefined;
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
  return limitJsonText(json, maxBytes, () => result);
}

/**
 * limitResult of the value whose JSON.stringify text is `json` (a stored result), worked from the
 * text: only a result within `maxBytes` is parsed, so reading a 10 MB stored result costs a cut,
 * not a parse and a second stringify of all of it.
 */
export function limitJsonText(
  json: string,
  maxBytes: number,
  value: () => unknown = () => JSON.parse(json),
): { result: unknown; truncated?: true; originalBytes?: number } {
  const bytes = encoder.encode(json);
  const cut = cutEncoded(bytes, maxBytes);
  return cut === undefined ? { result: value() } : { result: cut, truncated: true, originalBytes: bytes.length };
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
function secretForms(secret: string): string[] {
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

/**
 * How much of a provider's error text is read at all (UTF-16 code units): a service may answer an
 * error with a body as large as the response cap (10 MB), and each secret form is one scan of what
 * is read, yet only ERROR_TEXT_MAX_CHARS of it is ever shown.
 */
export const ERROR_TEXT_SCAN_CHARS = 16 * 1024;

/**
 * Provider error text for a model: redacted first (so a cut never leaves half a token), then cut.
 * Only the first ERROR_TEXT_SCAN_CHARS are redacted; when the text is longer, the last characters
 * of that part are dropped too, as many as the longest secret form less one, since a secret
 * straddling the cut would show its first half there unredacted.
 */
export function providerErrorText(text: string, secrets: readonly string[]): string {
  const forms = secrets.filter((s) => s.length >= 6).flatMap(secretForms);
  const longer = text.length > ERROR_TEXT_SCAN_CHARS;
  let head = redact(longer ? text.slice(0, ERROR_TEXT_SCAN_CHARS) : text, forms);
  if (longer) head = head.slice(0, head.length - Math.max(0, ...forms.map((f) => f.length - 1)));
  const clean = head.replace(/\s+/g, ' ').trim();
  // Cut by characters (code points), never between the two halves of a surrogate pair: the first
  // 300 code points lie within the first 600 code units, so only those are split into characters.
  const chars = [...clean.slice(0, 2 * ERROR_TEXT_MAX_CHARS)];
  if (longer || clean.length > 2 * ERROR_TEXT_MAX_CHARS || chars.length > ERROR_TEXT_MAX_CHARS) {
    const kept = chars.slice(0, ERROR_TEXT_MAX_CHARS - 1).join('');
    // A lone high surrogate at the end (the dropped tail cut a pair) is not shown.
    return `${kept.replace(/[\uD800-\uDBFF]$/, '')}…`;
  }
  return clean;
}
