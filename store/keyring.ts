import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * AES-256-GCM encryption of secrets at rest under a keyring: every ciphertext names the key
 * that sealed it, new writes use the active key, and old keys keep decrypting until every row
 * has been re-sealed. The additional authenticated data binds a ciphertext to the row and field
 * it belongs to, so a value copied into another row does not decrypt.
 *
 * Format: `v1.<keyId>.<iv>.<ciphertext>.<tag>` (base64url parts).
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

const IV_BYTES = 12;
const TAG_BYTES = 16;

export class Keyring {
  readonly activeKeyId: string;

  constructor(
    private readonly keys: ReadonlyMap<string, Buffer>,
    activeKeyId?: string,
  ) {
    if (keys.size === 0) throw new KeyringError('no_keys', 'the keyring has no keys');
    this.activeKeyId = activeKeyId ?? [...keys.keys()][0];
    if (!keys.has(this.activeKeyId)) {
      throw new KeyringError('unknown_key', `active key "${this.activeKeyId}" is not in the keyring`);
    }
  }

  encrypt(plaintext: string, aad: string): string {
    const { keyId, iv, body, tag } = this.seal(Buffer.from(plaintext, 'utf8'), aad);
    return ['v1', keyId, iv.toString('base64url'), body.toString('base64url'), tag.toString('base64url')].join('.');
  }

  decrypt(sealed: string, aad: string): string {
    const parts = sealed.split('.');
    if (parts.length !== 5 || parts[0] !== 'v1') {
      throw new KeyringError('bad_ciphertext', 'not a sealed value');
    }
    const [, keyId, iv, body, tag] = parts;
    return this.open(keyId, Buffer.from(iv, 'base64url'), Buffer.from(body, 'base64url'), Buffer.from(tag, 'base64url'), aad).toString(
      'utf8',
    );
  }

  /** Binary form for large values (Temporal payloads): `iv | ciphertext | tag`, key id beside it. */
  encryptBytes(plaintext: Uint8Array, aad: string): { keyId: string; data: Buffer } {
    const { keyId, iv, body, tag } = this.seal(plaintext, aad);
    return { keyId, data: Buffer.concat([iv, body, tag]) };
  }

  decryptBytes(keyId: string, data: Uint8Array, aad: string): Buffer {
    const bytes = Buffer.from(data);
    if (bytes.length < IV_BYTES + TAG_BYTES) throw new KeyringError('bad_ciphertext', 'not a sealed value');
    return this.open(
      keyId,
      bytes.subarray(0, IV_BYTES),
      bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES),
      bytes.subarray(bytes.length - TAG_BYTES),
      aad,
    );
  }

  private seal(plaintext: Uint8Array, aad: string) {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.keyFor(this.activeKeyId), iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(aad, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return { keyId: this.activeKeyId, iv, body, tag: cipher.getAuthTag() };
  }

  private open(keyId: string, iv: Buffer, body: Buffer, tag: Buffer, aad: string): Buffer {
    if (tag.length !== TAG_BYTES) throw new KeyringError('bad_ciphertext', 'truncated authentication tag');
    // authTagLength pins the tag size: without it Node 20 accepts a shortened tag.
    const decipher = createDecipheriv('aes-256-gcm', this.keyFor(keyId), iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(tag);
    try {
      return Buffer.concat([decipher.update(body), decipher.final()]);
    } catch {
      throw new KeyringError('bad_ciphertext', 'the sealed value failed authentication (tampered, or bound to another row)');
    }
  }

  /** Which key sealed this value (for re-encryption sweeps after a rotation). */
  static keyIdOf(sealed: string): string {
    return sealed.split('.')[1] ?? '';
  }

  private keyFor(id: string): Buffer {
    const key = this.keys.get(id);
    if (!key) throw new KeyringError('unknown_key', `no key "${id}" in the keyring`);
    return key;
  }
}

export function generateKey(): string {
  return randomBytes(32).toString('base64');
}
