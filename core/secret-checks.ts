/**
 * What makes a secret "real" enough to sign portal sessions or seal credentials. Production
 * refuses to start on anything else: a missing secret, a value shipped as an example (the
 * docker-compose file and the README carry some), or one too short or too repetitive to have
 * come from a random generator.
 */

export const MIN_SIGNING_SECRET_LENGTH = 32;

/** The example values this repository ships (docker-compose.yml); never accepted in production. */
export const KNOWN_PLACEHOLDER_SECRETS = [
  'CHANGE-ME-at-least-32-random-characters-please',
  'k1:CHANGE-ME-c3dpdGNoYm9hcmQtZGV2LWtleS0zMi1ieXRlcw==',
] as const;

/** Words people put in example secrets ("CHANGE-ME", "replace me", "your-secret-here", …). */
const PLACEHOLDER_WORDS = /change[-_ ]?me|replace[-_ ]?me|placeholder|your[-_ ]?secret|not[-_ ]?a[-_ ]?secret/i;

/** Why `value` is not a usable signing secret, or undefined when it is. */
export function signingSecretProblem(value: string | undefined): string | undefined {
  if (value === undefined || value.trim() === '')
    return 'required in production (at least 32 random characters, e.g. `openssl rand -base64 32`)';
  if (isPlaceholder(value)) return 'is a placeholder from the examples; set at least 32 random characters (`openssl rand -base64 32`)';
  if (value.length < MIN_SIGNING_SECRET_LENGTH) return `expected at least ${MIN_SIGNING_SECRET_LENGTH} characters`;
  // A random 32-character string has close to 32 distinct characters; "aaaa…" or "abab…" is typed, not generated.
  if (new Set(value).size < 8) return 'is not random (fewer than 8 distinct characters); use `openssl rand -base64 32`';
  return undefined;
}

/** Why the keyring (raw `ENCRYPTION_KEYS` and its parsed keys) is not usable in production, or undefined. */
export function encryptionKeysProblem(raw: string | undefined, keys: ReadonlyMap<string, Buffer> | undefined): string | undefined {
  if (!keys || keys.size === 0) return 'required in production (id:base64 of 32 random bytes, e.g. k1:$(openssl rand -base64 32))';
  if (raw && isPlaceholder(raw)) return 'is a placeholder from the examples; generate a key with `openssl rand -base64 32`';
  for (const [id, key] of keys) {
    // 32 random bytes have about 31 distinct values; a key of one repeated byte is not a key.
    if (new Set(key).size < 16)
      return `key "${id}" is not random (fewer than 16 distinct bytes); generate it with \`openssl rand -base64 32\``;
  }
  return undefined;
}

/**
 * Whether `value` contains a secret this repository publishes (docker-compose.yml). Refused in
 * every mode: NODE_ENV defaults to development, and a forgotten NODE_ENV=production must not let
 * anyone who read the repository sign portal sessions.
 */
export function isPublishedSecret(value: string | undefined): boolean {
  return value !== undefined && KNOWN_PLACEHOLDER_SECRETS.some((p) => value.includes(p));
}

function isPlaceholder(value: string): boolean {
  return KNOWN_PLACEHOLDER_SECRETS.some((p) => value.includes(p)) || PLACEHOLDER_WORDS.test(value);
}
