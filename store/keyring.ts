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
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.keyFor(this.activeKeyId), iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(aad, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return ['v1', this.activeKeyId, iv.toString('base64url'), body.toString('base64url'), cipher.getAuthTag().toString('base64url')].join(
      '.',
    );
  }

  decrypt(sealed: string, aad: string): string {
    const parts = sealed.split('.');
    if (parts.length !== 5 || parts[0] !== 'v1') {
      throw new KeyringError('bad_ciphertext', 'not a sealed value');
    }
    const [, keyId, iv, body, tag] = parts;
    const tagBytes = Buffer.from(tag, 'base64url');
    if (tagBytes.length !== TAG_BYTES) throw new KeyringError('bad_ciphertext', 'truncated authentication tag');
    // authTagLength pins the tag size: without it Node 20 accepts a shortened tag.
    const decipher = createDecipheriv('aes-256-gcm', this.keyFor(keyId), Buffer.from(iv, 'base64url'), { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(tagBytes);
    try {
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
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
