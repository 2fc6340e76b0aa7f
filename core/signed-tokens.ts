import { createHmac } from 'node:crypto';
import { errors, jwtVerify, SignJWT } from 'jose';
import { MIN_SIGNING_SECRET_LENGTH } from './secret-checks.js';

/**
 * Short-lived signed tokens (HS256 JWTs): connect links bound to a caller, and portal sessions.
 * Each kind has its own audience so one can never stand in for the other.
 */
export type TokenKind = 'connect-link' | 'portal-session';

export class TokenSigner {
  private readonly key: Uint8Array;

  /** Refuses a missing or short secret: nothing is ever signed with an empty or guessable key. */
  constructor(secret: string) {
    if (typeof secret !== 'string' || secret.length < MIN_SIGNING_SECRET_LENGTH) {
      throw new Error(`The signing secret must have at least ${MIN_SIGNING_SECRET_LENGTH} characters (PORTAL_SIGNING_SECRET)`);
    }
    this.key = new TextEncoder().encode(secret);
  }

  /** An HMAC of `data` under a key derived from the secret for `purpose` (never the signing key itself). */
  mac(purpose: string, data: string): string {
    const derived = createHmac('sha256', this.key).update(`switchboard:${purpose}`).digest();
    return createHmac('sha256', derived).update(data).digest('base64url');
  }

  async sign(kind: TokenKind, claims: Record<string, string>, ttlSec: number): Promise<string> {
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256' })
      .setAudience(`switchboard:${kind}`)
      .setIssuedAt()
      .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSec)
      .sign(this.key);
  }

  /** The claims, or undefined for a token that is forged, expired or of another kind. */
  async verify(kind: TokenKind, token: string): Promise<Record<string, unknown> | undefined> {
    try {
      const { payload } = await jwtVerify(token, this.key, { audience: `switchboard:${kind}`, algorithms: ['HS256'] });
      return payload;
    } catch (err) {
      if (err instanceof errors.JOSEError) return undefined;
      throw err;
    }
  }
}
