import type { Payload, PayloadCodec, SerializationContext } from '@temporalio/common';
import proto from '@temporalio/proto';

// A CommonJS package: Node's ESM loader sees only its default export.
const { temporal } = proto;

import { type Keyring, KeyringError } from '../database/keyring.js';

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
 *
 * A payload is also bound to the workflow that owns it (the SDK's serialization context: the
 * workflow it starts, signals or belongs to, or the workflow of the activity it feeds). The owner
 * is written beside the ciphertext and sealed into it, and the strict worker refuses a payload whose
 * owner is not the workflow it is decoded for: a sealed batch input copied out of one history
 * cannot start another workflow. (Paired with the per-call claim, a run started again under the
 * same id reaches no service twice.)
 */

const ENCRYPTED_ENCODING = 'binary/encrypted';
const KEY_ID = 'encryption-key-id';
/** Marks payloads sealed under the HKDF-derived payload key; absent on payloads sealed before. */
const SCHEME = 'encryption-scheme';
const PAYLOAD_SCHEME = 'switchboard-payload-v2';
/**
 * A payload sealed to its owner (the v2 key, an AAD naming the owning workflow) carries OWNER
 * instead of SCHEME: OWNER's presence is the scheme. Every result of a batch carries it, so the
 * bytes it adds are paid in every history (a 500-result batch's history stays under 400 KB).
 */
const OWNER = 'encryption-owner';
const AAD = 'temporal-payload';

/** The owning workflow of a payload, as `["<namespace>","<workflow id>"]`; undefined when the SDK gives none. */
function ownerOf(context: SerializationContext | undefined): string | undefined {
  const workflowId = context?.workflowId;
  return context && workflowId ? JSON.stringify([context.namespace, workflowId]) : undefined;
}

/** OWNER's value read back: a namespace and a workflow id, or undefined for anything else. */
function parseOwner(value: string | undefined): [string, string] | undefined {
  try {
    const owner: unknown = JSON.parse(value ?? '');
    if (Array.isArray(owner) && owner.length === 2 && owner.every((part) => typeof part === 'string') && owner[1])
      return owner as [string, string];
  } catch {
    // Not JSON: not an owner.
  }
  return undefined;
}

/**
 * The workflows Switchboard starts from a Temporal Schedule (retention) have ids beginning with
 * this: the schedule seals its action for the workflow id it names, and the server starts each run
 * under that id followed by "-" and the run's RFC 3339 time. Only these owners open in such a run:
 * any other owner would let a copied batch input start again as `<batch id>-<time>`. A scheduled
 * workflow's input names no user.
 */
export const SCHEDULED_WORKFLOW_PREFIX = 'prune-';

/** Whether a payload owned by `owner` may be opened for `expected`: the same workflow, or a run of its schedule. */
function sameOwner(owner: [string, string], expected: string): boolean {
  if (JSON.stringify(owner) === expected) return true;
  const [ns, id] = owner;
  const [expectedNs, expectedId] = JSON.parse(expected) as [string, string];
  return (
    ns === expectedNs &&
    id.startsWith(SCHEDULED_WORKFLOW_PREFIX) &&
    expectedId.startsWith(`${id}-`) &&
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/.test(expectedId.slice(id.length + 1))
  );
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export const UNSEALED_MESSAGE =
  "payload not sealed with Switchboard's payload key: Switchboard's workflows and activities accept only input sealed by a client or worker with the Switchboard plugin (ENCRYPTION_KEYS)";

class UnsealedPayloadError extends Error {
  constructor(detail: string) {
    super(`${UNSEALED_MESSAGE} (${detail})`);
    this.name = 'UnsealedPayloadError';
  }
}

interface KeyringPayloadCodecOptions {
  /** Throw on a payload that is not sealed (or does not open) instead of passing it through. */
  refuseUnsealed?: boolean;
}

const text = (bytes: Uint8Array | null | undefined) => (bytes ? decoder.decode(bytes) : undefined);

export class KeyringPayloadCodec implements PayloadCodec {
  constructor(
    private readonly keyring: Keyring,
    private readonly options: KeyringPayloadCodecOptions = {},
  ) {}

  async encode(payloads: Payload[], context?: SerializationContext): Promise<Payload[]> {
    const owner = ownerOf(context);
    return payloads.map((payload) => {
      const plain = temporal.api.common.v1.Payload.encode(payload).finish();
      const { keyId, data } = this.keyring.encryptBytes(plain, owner ? `${AAD}:${owner}` : AAD);
      return {
        metadata: {
          encoding: encoder.encode(ENCRYPTED_ENCODING),
          [KEY_ID]: encoder.encode(keyId),
          ...(owner ? { [OWNER]: encoder.encode(owner) } : { [SCHEME]: encoder.encode(PAYLOAD_SCHEME) }),
        },
        data,
      };
    });
  }

  async decode(payloads: Payload[], context?: SerializationContext): Promise<Payload[]> {
    const expected = ownerOf(context);
    return payloads.map((payload) => {
      if (text(payload.metadata?.encoding) !== ENCRYPTED_ENCODING) {
        if (this.options.refuseUnsealed)
          throw new UnsealedPayloadError(`encoding ${JSON.stringify(text(payload.metadata?.encoding) ?? null)}`);
        return payload;
      }
      const keyId = text(payload.metadata?.[KEY_ID]) ?? '';
      const scheme = text(payload.metadata?.[SCHEME]);
      const ownerText = text(payload.metadata?.[OWNER]);
      try {
        if (scheme !== undefined && (scheme !== PAYLOAD_SCHEME || ownerText !== undefined))
          throw new KeyringError('bad_ciphertext', `unknown payload scheme "${scheme}"${ownerText !== undefined ? ' with an owner' : ''}`);
        let aad = AAD;
        if (ownerText !== undefined) {
          const owner = parseOwner(ownerText);
          if (!owner) throw new KeyringError('bad_ciphertext', 'a bound payload without a readable owner');
          // Only Switchboard's worker holds payloads to their owner; the codec endpoint and replays open any.
          if (this.options.refuseUnsealed && expected && !sameOwner(owner, expected))
            throw new KeyringError('bad_ciphertext', `sealed for workflow ${JSON.stringify(owner[1]).slice(0, 200)}, not this one`);
          aad = `${AAD}:${JSON.stringify(owner)}`;
        }
        const plain = this.keyring.decryptBytes(
          keyId,
          payload.data ?? new Uint8Array(),
          aad,
          scheme || ownerText !== undefined ? 'payload' : 'legacy',
        );
        return temporal.api.common.v1.Payload.decode(plain) as Payload;
      } catch (err) {
        if (this.options.refuseUnsealed && err instanceof KeyringError) throw new UnsealedPayloadError(err.message);
        throw err;
      }
    });
  }
}
