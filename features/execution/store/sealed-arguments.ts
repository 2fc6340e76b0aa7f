import type { Keyring } from '../../../platform/database/keyring.js';

/**
 * Secret tool arguments as a tool batch's workflow input carries them. The payload codec seals
 * the whole input, but a codec operator decodes it (Temporal UI): a value the tool's schema (or its
 * name) marks secret — a PIN, a password, a key an agent passes — is sealed a second time, under
 * the at-rest key, which the codec never uses. The execute activity opens it before the call runs.
 * The AAD binds the envelope to its caller and tool: copied into another call, it does not open.
 */

/** The one key of an envelope object: `{"$switchboard:sealed": "<ciphertext>"}`. */
export const SEALED_ARGUMENT_KEY = '$switchboard:sealed';

const aadOf = (owner: SealedArgumentOwner) => `tool-arguments:${owner.tenantId}:${owner.userId}:${owner.tool}`;

interface SealedArgumentOwner {
  tenantId: string;
  userId: string;
  tool: string;
}

export class SealedArgumentError extends Error {}

export function sealArgument(keyring: Keyring, owner: SealedArgumentOwner, value: unknown): Record<string, string> {
  return { [SEALED_ARGUMENT_KEY]: keyring.encrypt(JSON.stringify(value ?? null), aadOf(owner)) };
}

const isEnvelope = (value: unknown): value is Record<string, string> =>
  typeof value === 'object' &&
  value !== null &&
  !Array.isArray(value) &&
  Object.keys(value).length === 1 &&
  typeof (value as Record<string, unknown>)[SEALED_ARGUMENT_KEY] === 'string';

/**
 * `value` with every envelope opened (the whole arguments may be one). An envelope that does not
 * open — made up by an agent, or copied from another caller's call — throws SealedArgumentError.
 */
export function openSealedArguments<T>(keyring: Keyring, owner: SealedArgumentOwner, value: T): T {
  const open = (v: unknown): unknown => {
    if (isEnvelope(v)) {
      try {
        return JSON.parse(keyring.decrypt(v[SEALED_ARGUMENT_KEY], aadOf(owner)));
      } catch {
        throw new SealedArgumentError(`a ${SEALED_ARGUMENT_KEY} value that was not sealed for this call`);
      }
    }
    if (Array.isArray(v)) return v.map(open);
    if (v && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, item] of Object.entries(v)) {
        // As own properties, whatever their names (`__proto__` included): the call gets what was sent.
        Object.defineProperty(out, k, { value: open(item), enumerable: true, writable: true, configurable: true });
      }
      return out;
    }
    return v;
  };
  return open(value) as T;
}

/** Whether `value` holds an envelope anywhere (most calls hold none, and pass through untouched). */
export function hasSealedArguments(value: unknown): boolean {
  if (isEnvelope(value)) return true;
  if (Array.isArray(value)) return value.some(hasSealedArguments);
  if (value && typeof value === 'object') return Object.values(value).some(hasSealedArguments);
  return false;
}
