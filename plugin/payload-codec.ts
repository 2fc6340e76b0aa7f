import type { Payload, PayloadCodec } from '@temporalio/common';
import proto from '@temporalio/proto';

// A CommonJS package: Node's ESM loader sees only its default export.
const { temporal } = proto;

import { type Keyring, KeyringError } from '../store/keyring.js';

/**
 * Encrypts every payload Switchboard's workflows and activities carry (inputs, results, signals,
 * updates, failure details), so Temporal's history — and so Temporal UI — holds ciphertext.
 * Authorised operators read it through the codec endpoint. Keys rotate with the keyring: each
 * payload names the key that sealed it, and the scheme it was sealed under (payloads from
 * before the key split carry none and open with the raw key, so recorded histories replay).
 *
 * Sealing is also Switchboard's proof of origin: only holders of the payload key can produce a
 * payload that opens. Switchboard's own worker therefore refuses (`refuseUnsealed`) any payload
 * that does not open: a workflow started, signalled or updated with plain JSON by anyone who can
 * merely reach Temporal fails its workflow task (activity: its attempt) with
 * {@link UnsealedPayloadError}, and runs nothing.
 */

export const ENCRYPTED_ENCODING = 'binary/encrypted';
const KEY_ID = 'encryption-key-id';
/** Marks payloads sealed under the HKDF-derived payload key; absent on payloads sealed before. */
const SCHEME = 'encryption-scheme';
const PAYLOAD_SCHEME = 'switchboard-payload-v2';
const AAD = 'temporal-payload';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export const UNSEALED_MESSAGE =
  "payload not sealed with Switchboard's payload key: Switchboard's workflows and activities accept only input sealed by a client or worker with the Switchboard plugin (ENCRYPTION_KEYS)";

export class UnsealedPayloadError extends Error {
  constructor(detail: string) {
    super(`${UNSEALED_MESSAGE} (${detail})`);
    this.name = 'UnsealedPayloadError';
  }
}

export interface KeyringPayloadCodecOptions {
  /** Throw on a payload that is not sealed (or does not open) instead of passing it through. */
  refuseUnsealed?: boolean;
}

const text = (bytes: Uint8Array | null | undefined) => (bytes ? decoder.decode(bytes) : undefined);

export class KeyringPayloadCodec implements PayloadCodec {
  constructor(
    private readonly keyring: Keyring,
    private readonly options: KeyringPayloadCodecOptions = {},
  ) {}

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      const { keyId, data } = this.keyring.encryptBytes(temporal.api.common.v1.Payload.encode(payload).finish(), AAD);
      return {
        metadata: {
          encoding: encoder.encode(ENCRYPTED_ENCODING),
          [KEY_ID]: encoder.encode(keyId),
          [SCHEME]: encoder.encode(PAYLOAD_SCHEME),
        },
        data,
      };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      if (text(payload.metadata?.encoding) !== ENCRYPTED_ENCODING) {
        if (this.options.refuseUnsealed)
          throw new UnsealedPayloadError(`encoding ${JSON.stringify(text(payload.metadata?.encoding) ?? null)}`);
        return payload;
      }
      const keyId = text(payload.metadata?.[KEY_ID]) ?? '';
      const scheme = text(payload.metadata?.[SCHEME]);
      try {
        if (scheme !== undefined && scheme !== PAYLOAD_SCHEME)
          throw new KeyringError('bad_ciphertext', `unknown payload scheme "${scheme}"`);
        const plain = this.keyring.decryptBytes(keyId, payload.data ?? new Uint8Array(), AAD, scheme ? 'payload' : 'legacy');
        return temporal.api.common.v1.Payload.decode(plain) as Payload;
      } catch (err) {
        if (this.options.refuseUnsealed && err instanceof KeyringError) throw new UnsealedPayloadError(err.message);
        throw err;
      }
    });
  }
}
