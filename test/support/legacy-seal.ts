import { createCipheriv, randomBytes } from 'node:crypto';

/**
 * What the keyring wrote before keys were derived per purpose (finding 6): AES-256-GCM straight
 * under the raw ENCRYPTION_KEYS entry, `v1.<keyId>.<iv>.<ciphertext>.<tag>`. Tests seal "old
 * rows" with it to prove they still open.
 */
export function sealBeforeKeySplit(raw: Buffer, keyId: string, plaintext: string, aad: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', raw, iv, { authTagLength: 16 });
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', keyId, ...[iv, body, cipher.getAuthTag()].map((p) => p.toString('base64url'))].join('.');
}
