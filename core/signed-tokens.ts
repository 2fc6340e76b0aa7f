import { errors, jwtVerify, SignJWT } from 'jose';

/**
 * Short-lived signed tokens (HS256 JWTs): connect links bound to a caller, and portal sessions.
 * Each kind has its own audience so one can never stand in for the other.
 */
export type TokenKind = 'connect-link' | 'portal-session';

export class TokenSigner {
  private readonly key: Uint8Array;

  constructor(secret: string) {
    this.key = new TextEncoder().encode(secret);
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
