import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { errors, jwtVerify, SignJWT } from 'jose';

/**
 * Identity assertions between Switchboard instances. A source key on a remote instance is a
 * delegation capability: every request made with it carries a short-lived EdDSA JWT naming the
 * local tenant and user it acts for. The local instance holds the private key (SWITCHBOARD_SOURCES'
 * `assertionKey`); the remote keeps only the public key, so nothing stored there can mint one.
 */

export const ASSERTION_HEADER = 'switchboard-assertion';
const AUDIENCE = 'switchboard:source-assertion';
const ALGORITHM = 'EdDSA';
/** Long enough for clock skew between instances, short enough that a copied assertion is soon useless. */
const ASSERTION_TTL_SEC = 60;
const MAX_AGE_SEC = 5 * 60;

interface AssertedIdentity {
  tenant: string;
  user: string;
}

/** A fresh key pair: the private half (base64url PKCS#8) for the local config, the public half (base64url SPKI) to store. */
export function newAssertionKeyPair(): { privateKey: string; publicKey: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    privateKey: privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64url'),
    publicKey: publicKey.export({ format: 'der', type: 'spki' }).toString('base64url'),
  };
}

const privateKeys = new Map<string, KeyObject>();

/** The signing key of a config's `assertionKey` (parsed once per process). */
export function assertionSigningKey(encoded: string): KeyObject {
  let key = privateKeys.get(encoded);
  if (!key) {
    key = createPrivateKey({ key: Buffer.from(encoded, 'base64url'), format: 'der', type: 'pkcs8' });
    if (key.asymmetricKeyType !== 'ed25519') throw new Error('a source assertionKey must be an Ed25519 private key');
    privateKeys.set(encoded, key);
  }
  return key;
}

export async function signAssertion(encodedPrivateKey: string, identity: AssertedIdentity): Promise<string> {
  return new SignJWT({ tenant: identity.tenant })
    .setProtectedHeader({ alg: ALGORITHM })
    .setSubject(identity.user)
    .setAudience(AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + ASSERTION_TTL_SEC)
    .sign(assertionSigningKey(encodedPrivateKey));
}

/** The identity an assertion names, or undefined when it is malformed, forged (another key), expired or too old. */
export async function verifyAssertion(encodedPublicKey: string, token: string): Promise<AssertedIdentity | undefined> {
  try {
    const key = createPublicKey({ key: Buffer.from(encodedPublicKey, 'base64url'), format: 'der', type: 'spki' });
    const { payload } = await jwtVerify(token, key, {
      audience: AUDIENCE,
      algorithms: [ALGORITHM],
      maxTokenAge: MAX_AGE_SEC,
      requiredClaims: ['sub', 'exp', 'iat'],
    });
    const tenant = payload.tenant;
    const user = payload.sub;
    if (typeof tenant !== 'string' || !tenant || tenant.length > 200 || !user || user.length > 200) return undefined;
    return { tenant, user };
  } catch (err) {
    if (err instanceof errors.JOSEError) return undefined;
    throw err;
  }
}
