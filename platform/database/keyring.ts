import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * AES-256-GCM encryption under a keyring: every ciphertext names the key that sealed it, new
 * writes use the active key, and old keys keep decrypting until every value has been re-sealed.
 * The additional authenticated data binds a ciphertext to the row and field it belongs to, so a
 * value copied into another row does not decrypt.
 *
 * One keyring entry (`ENCRYPTION_KEYS`) is not used as a key itself: two keys are derived from it
 * with HKDF-SHA256, one per purpose, so a ciphertext of one purpose never opens under the other:
 * - `at-rest`: secrets in Postgres (credentials, PKCE verifiers, the portal's sign-in cookie);
 * - `payload`: Temporal payloads (held by every worker and client of Switchboard's workflows,
 *   agent workers included, and used by the codec endpoint). Holding the payload key never
 *   opens a stored credential.
 * - `result`: tool results kept in Postgres instead of Temporal's history (features/results/store/stored-results.ts);
 *   agents' workers, which hold the payload key alone, cannot open them.
 * - `client-registration`: the client secrets and registration access tokens of Switchboard's
 *   dynamic registrations at upstream MCP servers' authorization servers
 *   (platform/database/mcp-client-registrations.ts), shared by every tenant, so never under a tenant row's key.
 * Values sealed before the split (format `v1`, payloads without a scheme mark) were sealed with
 * the raw entry; they still open with it (`legacy`), and `keys reseal` moves stored ones on.
 *
 * An agent's worker needs only the payload key: `exportPayloadKeys()` (`npm run admin --
 * payload-keys`) gives them, and `Keyring.payloadOnly` holds nothing else — it opens no secret at
 * rest, and no payload sealed before the split.
 *
 * At-rest format: `v2.<keyId>.<iv>.<ciphertext>.<tag>` (base64url parts; `v1.` = legacy raw key).
 */

export class KeyringError extends Error {
  constructor(
    readonly code: 'unknown_key' | 'bad_ciphertext' | 'no_keys',
    message: string,
  ) {
    super(message);
    this.name = 'KeyringError';
  }
}

/** What a derived key is for; `legacy` is the raw keyring entry, for values sealed before the split. */
type KeyPurpose = 'at-rest' | 'payload' | 'result' | 'client-registration' | 'legacy';

/** Purposes of values sealed at rest in the `v2` text format. */
type AtRestPurpose = 'at-rest' | 'client-registration';

const IV_BYTES = 12;
const TAG_BYTES = 16;
const HKDF_SALT = Buffer.from('switchboard keyring v2', 'utf8');
const AT_REST_FORMAT = 'v2';
const LEGACY_FORMAT = 'v1';

function derive(raw: Buffer, purpose: Exclude<KeyPurpose, 'legacy'>): Buffer {
  return Buffer.from(hkdfSync('sha256', raw, HKDF_SALT, `switchboard ${purpose} key`, 32));
}

export class Keyring {
  readonly activeKeyId: string;
  private readonly derived: ReadonlyMap<KeyPurpose, ReadonlyMap<string, Buffer>>;

  /** `keys`: the ENCRYPTION_KEYS entries; with `payloadOnly`, already-derived payload keys (`exportPayloadKeys`). */
  constructor(keys: ReadonlyMap<string, Buffer>, activeKeyId?: string, options: { payloadOnly?: boolean } = {}) {
    if (keys.size === 0) throw new KeyringError('no_keys', 'the keyring has no keys');
    this.activeKeyId = activeKeyId ?? [...keys.keys()][0];
    if (!keys.has(this.activeKeyId)) {
      throw new KeyringError('unknown_key', `active key "${this.activeKeyId}" is not in the keyring`);
    }
    const each = (f: (raw: Buffer) => Buffer) => new Map([...keys].map(([id, raw]) => [id, f(raw)]));
    this.derived = options.payloadOnly
      ? new Map([['payload', new Map(keys)]])
      : new Map<KeyPurpose, ReadonlyMap<string, Buffer>>([
          ['legacy', new Map(keys)],
          ['at-rest', each((raw) => derive(raw, 'at-rest'))],
          ['payload', each((raw) => derive(raw, 'payload'))],
          ['result', each((raw) => derive(raw, 'result'))],
          ['client-registration', each((raw) => derive(raw, 'client-registration'))],
        ]);
  }

  /** A keyring of payload keys alone (from `exportPayloadKeys`), for agents' workers and clients. */
  static payloadOnly(payloadKeys: ReadonlyMap<string, Buffer>, activeKeyId?: string): Keyring {
    return new Keyring(payloadKeys, activeKeyId, { payloadOnly: true });
  }

  /** The derived payload keys as `id:base64,…` (active first): all an agent's worker needs. */
  exportPayloadKeys(): string {
    const keys = this.derived.get('payload') ?? new Map<string, Buffer>();
    const ids = [this.activeKeyId, ...[...keys.keys()].filter((id) => id !== this.activeKeyId)];
    return ids.map((id) => `${id}:${this.keyFor('payload', id).toString('base64')}`).join(',');
  }

  /** Seals a secret at rest (the at-rest key, or another at-rest purpose's). */
  encrypt(plaintext: string, aad: string, purpose: AtRestPurpose = 'at-rest'): string {
    const { keyId, iv, body, tag } = this.seal(purpose, Buffer.from(plaintext, 'utf8'), aad);
    return [AT_REST_FORMAT, keyId, iv.toString('base64url'), body.toString('base64url'), tag.toString('base64url')].join('.');
  }

  /** Opens a secret at rest: `v2` under the at-rest key, `v1` (sealed before the split) under the raw key. */
  decrypt(sealed: string, aad: string, atRestPurpose: AtRestPurpose = 'at-rest'): string {
    const parts = sealed.split('.');
    if (parts.length !== 5 || (parts[0] !== AT_REST_FORMAT && parts[0] !== LEGACY_FORMAT)) {
      throw new KeyringError('bad_ciphertext', 'not a sealed value');
    }
    const [format, keyId, iv, body, tag] = parts;
    const purpose = format === AT_REST_FORMAT ? atRestPurpose : 'legacy';
    const [ivBytes, bodyBytes, tagBytes] = [iv, body, tag].map((p) => Buffer.from(p, 'base64url'));
    return this.open(purpose, keyId, ivBytes, bodyBytes, tagBytes, aad).toString('utf8');
  }

  /** Whether a value at rest was sealed before the key split (and should be re-sealed). */
  static isLegacy(sealed: string): boolean {
    return sealed.startsWith(`${LEGACY_FORMAT}.`);
  }

  /** Binary form for Temporal payloads (or stored results): `iv | ciphertext | tag` under the purpose's key, key id beside it. */
  encryptBytes(plaintext: Uint8Array, aad: string, purpose: 'payload' | 'result' = 'payload'): { keyId: string; data: Buffer } {
    const { keyId, iv, body, tag } = this.seal(purpose, plaintext, aad);
    return { keyId, data: Buffer.concat([iv, body, tag]) };
  }

  /** Opens what encryptBytes sealed (`payload`, `result`), or a payload sealed before the split (`legacy`). */
  decryptBytes(keyId: string, data: Uint8Array, aad: string, purpose: 'payload' | 'result' | 'legacy' = 'payload'): Buffer {
    const bytes = Buffer.from(data);
    if (bytes.length < IV_BYTES + TAG_BYTES) throw new KeyringError('bad_ciphertext', 'not a sealed value');
    return this.open(
      purpose,
      keyId,
      bytes.subarray(0, IV_BYTES),
      bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES),
      bytes.subarray(bytes.length - TAG_BYTES),
      aad,
    );
  }

  private seal(purpose: KeyPurpose, plaintext: Uint8Array, aad: string) {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.keyFor(purpose, this.activeKeyId), iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(aad, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return { keyId: this.activeKeyId, iv, body, tag: cipher.getAuthTag() };
  }

  private open(purpose: KeyPurpose, keyId: string, iv: Buffer, body: Buffer, tag: Buffer, aad: string): Buffer {
    if (tag.length !== TAG_BYTES) throw new KeyringError('bad_ciphertext', 'truncated authentication tag');
    // authTagLength pins the tag size: without it Node 20 accepts a shortened tag.
    const decipher = createDecipheriv('aes-256-gcm', this.keyFor(purpose, keyId), iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(tag);
    try {
      return Buffer.concat([decipher.update(body), decipher.final()]);
    } catch {
      throw new KeyringError(
        'bad_ciphertext',
        'the sealed value failed authentication (tampered, bound to another row, or sealed for another purpose)',
      );
    }
  }

  /** Which key sealed this value (for re-encryption sweeps after a rotation). */
  static keyIdOf(sealed: string): string {
    return sealed.split('.')[1] ?? '';
  }

  private keyFor(purpose: KeyPurpose, id: string): Buffer {
    const key = this.derived.get(purpose)?.get(id);
    if (!key) throw new KeyringError('unknown_key', `no key "${id}" in the keyring (${purpose})`);
    return key;
  }
}

export function generateKey(): string {
  return randomBytes(32).toString('base64');
}
