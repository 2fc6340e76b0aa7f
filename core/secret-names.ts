/**
 * Whether an argument's name says its value is a secret, for arguments a schema does not mark
 * (defence in depth: an upstream MCP server's schema may not). The approval summary, the sealing of
 * secret arguments in a batch's history and the redaction of echoed secrets all ask this one
 * function. Pure.
 *
 * A name is read as words (snake_case, camelCase, kebab-case, dotted), and is secret only when it
 * names a secret — its last word is one (`password`, `access_token`, `client_secret`) or it ends in
 * a phrase that is one (`apiKey`, `x-api-key`, `private_key`). A word inside another word, or a
 * secret word that only qualifies the noun the name ends in, does not count: `bypass_pull_request_allowances`,
 * `passenger_list`, `token_address`, `secretary`, `tokenizer`, `keyword` and `max_tokens` are shown
 * on the approval page, so a person sees what they approve.
 */

/** A name longer than this is judged by its last characters only (the words that decide are at its end). */
const NAME_MAX_CHARS = 200;

/** Last words that name a secret by themselves. */
const SECRET_WORDS = new Set([
  'password',
  'passwords',
  'passwd',
  'passphrase',
  'passcode',
  'pass',
  'secret',
  'secrets',
  'token',
  'credential',
  'credentials',
  'cookie',
  'cookies',
  'authorization',
  // One word for a two-word secret, as some APIs spell them (`apikey`, `X-APIKEY`, `accesstoken`).
  'apikey',
  'apikeys',
  'accesstoken',
  'refreshtoken',
  'authtoken',
  'apitoken',
  'bearertoken',
  'sessiontoken',
  'privatekey',
  'secretkey',
  'accesskey',
  'clientsecret',
]);

/** Words before a last `key`/`keys` that make it a secret key (`api_key`, `privateKey`, `aws-access-key`). */
const SECRET_KEY_KINDS = new Set(['api', 'private', 'access', 'secret', 'signing', 'encryption', 'master', 'session', 'auth']);

/** A last word that only says which form a secret takes: the word before it decides (`password_confirmation`, `token_value`). */
const SECRET_FORM_WORDS = new Set(['confirm', 'confirmation', 'again', 'repeat', 'value', 'b64', 'base64', 'encoded', 'hex']);

/** The name's words, lower case: `XApiKey` → x, api, key; `bypass_pull_request_allowances` → bypass, pull, request, allowances. */
function nameWords(name: string): string[] {
  return name
    .slice(-NAME_MAX_CHARS)
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word && !/^\d+$/.test(word));
}

/** A word without the number it ends in (`password2`, `token_1` already lost its `1`). */
const bare = (word: string | undefined) => word?.replace(/\d+$/, '');

export function isSecretName(name: string): boolean {
  const words = nameWords(name);
  if (words.length > 1 && SECRET_FORM_WORDS.has(words[words.length - 1])) words.pop();
  const last = bare(words[words.length - 1]);
  if (last === undefined) return false;
  if (SECRET_WORDS.has(last)) return true;
  return (last === 'key' || last === 'keys') && SECRET_KEY_KINDS.has(bare(words[words.length - 2]) ?? '');
}
