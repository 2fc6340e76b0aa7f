import type { Payload, PayloadCodec } from '@temporalio/common';
import proto from '@temporalio/proto';

// A CommonJS package: Node's ESM loader sees only its default export.
const { temporal } = proto;

import type { Keyring } from '../store/keyring.js';

/**
 * Encrypts every payload Switchboard's workflows and activities carry (inputs, results, signals,
 * updates, failure details), so Temporal's history — and so Temporal UI — holds ciphertext.
 * Authorised operators read it through the codec endpoint. Keys rotate with the keyring: each
 * payload names the key that sealed it.
 */

export const ENCRYPTED_ENCODING = 'binary/encrypted';
const KEY_ID = 'encryption-key-id';
const AAD = 'temporal-payload';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class KeyringPayloadCodec implements PayloadCodec {
  constructor(private readonly keyring: Keyring) {}

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      const { keyId, data } = this.keyring.encryptBytes(temporal.api.common.v1.Payload.encode(payload).finish(), AAD);
      return { metadata: { encoding: encoder.encode(ENCRYPTED_ENCODING), [KEY_ID]: encoder.encode(keyId) }, data };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      if (!payload.metadata?.encoding || decoder.decode(payload.metadata.encoding) !== ENCRYPTED_ENCODING) return payload;
      const keyId = decoder.decode(payload.metadata[KEY_ID] ?? new Uint8Array());
      const plain = this.keyring.decryptBytes(keyId, payload.data ?? new Uint8Array(), AAD);
      return temporal.api.common.v1.Payload.decode(plain) as Payload;
    });
  }
}
