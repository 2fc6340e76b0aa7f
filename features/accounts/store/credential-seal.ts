import type { Keyring } from '../../../platform/database/keyring.js';
import type { StoredCredential } from './accounts.js';

/**
 * The one way a credential is sealed into, and opened from, an account row's `credential_sealed`:
 * every write (a new account, a reconnect, a refresh) seals here.
 */

/** Binds a ciphertext to its row: copied into another account, it fails to decrypt. */
export const credentialAad = (tenantId: string, accountId: string) => `account:${tenantId}:${accountId}:credential`;

type AccountRef = { tenantId: string; id: string };

/** The ciphertext for the row, and the key that sealed it (`credential_key_id`). */
export function sealCredential(keyring: Keyring, account: AccountRef, credential: StoredCredential): { sealed: string; keyId: string } {
  return { sealed: keyring.encrypt(JSON.stringify(credential), credentialAad(account.tenantId, account.id)), keyId: keyring.activeKeyId };
}

export function openCredential(keyring: Keyring, account: AccountRef, sealed: string): StoredCredential {
  return JSON.parse(keyring.decrypt(sealed, credentialAad(account.tenantId, account.id))) as StoredCredential;
}

/** A credential as a tool call uses it: opened, with its version (refreshes compare-and-set on it) and its expiry. */
export interface LoadedCredential {
  credential: StoredCredential;
  version: number;
  expiresAt: Date | null;
}

/** Opens the credential columns of an account row. */
export function openLoadedCredential(
  keyring: Keyring,
  account: AccountRef,
  row: { credential_sealed: string; credential_version: number; access_expires_at: Date | null },
): LoadedCredential {
  return {
    credential: openCredential(keyring, account, row.credential_sealed),
    version: row.credential_version,
    expiresAt: row.access_expires_at,
  };
}
