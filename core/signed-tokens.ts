import { createHmac } from 'node:crypto';
import { errors, jwtVerify, SignJWT } from 'jose';
import { LRUCache } from 'lru-cache';
import { MIN_SIGNING_SECRET_LENGTH } from './secret-checks.js';

/**
 * Short-lived signed tokens (HS256 JWTs): connect links bound to a caller, and portal sessions.
 * Each kind has its own audience so one can never stand in for the other.
 */
type TokenKind = 'connect-link' | 'portal-session';

/**
 * Tokens verified lately, remembered until they expire. Every portal request verifies its session
 * cookie, and jose's WebCrypto HMAC costs ~0.2 ms of event loop each time: a burst of hundreds of
 * posts with one cookie (a tenant testing made-up keys) would hold every tenant's requests up for
 * that long. Only tokens whose signature held are remembered, keyed by the whole token and kind,
 * so a forged or altered one is verified in full every time; bounded, least recently used out.
 */
const VERIFIED_TOKENS_MAX = 10_000;
/** Purposes `mac` derives keys for are names in code: a handful. */
const MAC_PURPOSES_MAX = 64;

export class TokenSigner {
  private readonly key: Uint8Array;
  private readonly verified = new LRUCache<string, { claims: Record<string, unknown>; exp: number }>({ max: VERIFIED_TOKENS_MAX });
  private readonly macKeys = new LRUCache<string, Buffer>({ max: MAC_PURPOSES_MAX });

  /** Refuses a missing or short secret: nothing is ever signed with an empty or guessable key. */
  constructor(secret: string) {
    if (typeof secret !== 'string' || secret.length < MIN_SIGNING_SECRET_LENGTH) {
      throw new Error(`The signing secret must have at least ${MIN_SIGNING_SECRET_LENGTH} characters (PORTAL_SIGNING_SECRET)`);
    }
    this.key = new TextEncoder().encode(secret);
  }

  /** An HMAC of `data` under a key derived from the secret for `purpose` (never the signing key itself). */
  mac(purpose: string, data: string): string {
    let derived = this.macKeys.get(purpose);
    if (!derived) {
      derived = createHmac('sha256', this.key).update(`switchboard:${purpose}`).digest();
      this.macKeys.set(purpose, derived);
    }
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
    const remembered = `${kind} ${token}`;
    const known = this.verified.get(remembered);
    if (known) {
      if (Date.now() / 1000 < known.exp) return { ...known.claims };
      this.verified.delete(remembered);
      return undefined;
    }
    try {
      const { payload } = await jwtVerify(token, this.key, { audience: `switchboard:${kind}`, algorithms: ['HS256'] });
      // Every token signed here expires (sign); one without `exp` is verified again each time.
      if (typeof payload.exp === 'number') this.verified.set(remembered, { claims: { ...payload }, exp: payload.exp });
      return payload;
    } catch (err) {
      if (err instanceof errors.JOSEError) return undefined;
      throw err;
    }
  }
}
