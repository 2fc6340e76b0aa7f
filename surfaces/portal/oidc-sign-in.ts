import type { Request, Response } from 'express';
import * as oidc from 'openid-client';
import { safeNext } from '../../core/urls.js';
import { bindOidcIdentity, findUserByEmail, findUserByOidcIdentity, type User } from '../../features/accounts/store/users.js';
import type { ServiceContext } from '../../features/context.js';
import { messagePage } from './html.js';
import { onlyCookie, startPortalSession } from './session-cookie.js';

/**
 * Portal sign-in through the operator's identity provider (PORTAL_OIDC_*), authorization code
 * with PKCE. Who signs in is decided by the provider's issuer + subject: the first sign-in of a
 * Switchboard user matches them by a *verified* email and binds the user to that identity; every
 * later sign-in must come from the same identity. An email alone (unverified, or re-used by
 * another account at the provider or at another provider) never signs anyone in.
 */

const LOGIN_COOKIE = 'sb_login';

/** What the provider says about the human, from the ID token or else from userinfo. */
interface OidcIdentity {
  issuer: string;
  subject: string;
  email?: string;
  emailVerified: boolean;
}

type SignInDecision = { user: User } | { refused: { title: string; message: string } };

/** Which Switchboard user this identity signs in as, binding it on a user's first sign-in. */
async function resolveOidcUser(ctx: ServiceContext, identity: OidcIdentity): Promise<SignInDecision> {
  const bound = await findUserByOidcIdentity(ctx.pool, identity.issuer, identity.subject);
  if (bound) return { user: bound };
  const { email } = identity;
  if (!email) return { refused: { title: 'No email', message: 'The identity provider did not say which email this account has.' } };
  if (!identity.emailVerified) {
    return {
      refused: {
        title: 'Email not verified',
        message: `The identity provider has not verified the email ${email}. Switchboard signs in only verified emails: verify it with your identity provider, then try again.`,
      },
    };
  }
  const user = await findUserByEmail(ctx.pool, email);
  if (!user) return { refused: { title: 'No account', message: `No Switchboard user has the email ${email}.` } };
  if (!(await bindOidcIdentity(ctx.pool, user.id, identity.issuer, identity.subject))) {
    ctx.logger.warn({ userId: user.id, issuer: identity.issuer }, 'portal sign-in refused: the user is bound to another identity');
    return {
      refused: {
        title: 'Signed in with another account',
        message: `The Switchboard user ${email} signs in with a different account of the identity provider. Sign in with that account, or ask an operator to release the binding (npm run admin -- unbind-sign-in ${email}).`,
      },
    };
  }
  return { user };
}

interface OidcSignIn {
  /** Sends the browser to the identity provider. */
  start(req: Request, res: Response, next: string): Promise<void>;
  /** The provider's redirect back: checks the answer, decides who signs in, starts the session. */
  callback(req: Request, res: Response): Promise<void>;
}

/** Issuer, subject and email of the human, from the ID token or else from userinfo (many providers keep the ID token lean). */
async function identityOf(configuration: oidc.Configuration, tokens: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers) {
  const claims = tokens.claims();
  if (!claims) throw new Error('the token response has no ID token');
  let email = claims.email;
  let verified = claims.email_verified;
  if (email === undefined || verified === undefined) {
    // Both from the same source: an email from one and a verification from the other prove nothing.
    const info = await oidc.fetchUserInfo(configuration, tokens.access_token, claims.sub);
    email = info.email;
    verified = info.email_verified;
  }
  return {
    issuer: claims.iss,
    subject: claims.sub,
    email: typeof email === 'string' ? email : undefined,
    // Only the JSON boolean true counts ("true" as a string, or absent, is not a verification).
    emailVerified: verified === true,
  };
}

/** The OIDC sign-in when PORTAL_OIDC_* is configured; undefined otherwise. */
export function oidcSignIn(ctx: ServiceContext): OidcSignIn | undefined {
  const { config } = ctx;
  if (!config.PORTAL_OIDC_ISSUER || !config.PORTAL_OIDC_CLIENT_ID || !config.PORTAL_OIDC_CLIENT_SECRET) return undefined;
  const issuerUrl = new URL(config.PORTAL_OIDC_ISSUER);
  const clientId = config.PORTAL_OIDC_CLIENT_ID;
  const clientSecret = config.PORTAL_OIDC_CLIENT_SECRET;
  let discovered: Promise<oidc.Configuration> | undefined;
  const getOidcConfig = () => {
    discovered ??= oidc
      .discovery(issuerUrl, clientId, clientSecret, undefined, {
        execute: issuerUrl.protocol === 'http:' ? [oidc.allowInsecureRequests] : [],
      })
      .catch((err) => {
        discovered = undefined;
        throw err;
      });
    return discovered;
  };
  const redirectUri = `${config.PUBLIC_BASE_URL}/portal/oidc/callback`;
  const https = config.PUBLIC_BASE_URL.startsWith('https:');
  // On https `__Host-` (so Path=/): a sibling subdomain cannot plant its own pending sign-in
  // (Mallory's verifier and state) for the callback to finish as Mallory.
  const loginCookie = https ? `__Host-${LOGIN_COOKIE}` : LOGIN_COOKIE;
  const cookieOptions = {
    httpOnly: true,
    sameSite: 'lax' as const,
    secure: https,
    path: https ? '/' : '/portal/oidc',
  };

  return {
    async start(_req, res, next) {
      const codeVerifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const url = oidc.buildAuthorizationUrl(await getOidcConfig(), {
        redirect_uri: redirectUri,
        scope: 'openid email profile',
        state,
        code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: 'S256',
      });
      // The verifier is sealed before it rides in the browser's cookie.
      res.cookie(loginCookie, ctx.keyring.encrypt(JSON.stringify({ codeVerifier, state, next }), 'portal-login'), {
        ...cookieOptions,
        maxAge: 10 * 60 * 1000,
      });
      res.redirect(303, url.toString());
    },

    async callback(req, res) {
      // Exactly one pending sign-in: a second cookie of the name was planted next to ours.
      const sealed = onlyCookie(req, loginCookie);
      res.clearCookie(loginCookie, cookieOptions);
      let pending: { codeVerifier: string; state: string; next: string };
      try {
        pending = JSON.parse(ctx.keyring.decrypt(String(sealed), 'portal-login'));
      } catch {
        res.status(400).send(messagePage('Sign-in failed', 'The sign-in took too long or was started elsewhere. Try again.', 'bad'));
        return;
      }
      const current = new URL(redirectUri);
      for (const [k, v] of Object.entries(req.query)) if (typeof v === 'string') current.searchParams.set(k, v);
      let identity: OidcIdentity;
      try {
        const configuration = await getOidcConfig();
        const tokens = await oidc.authorizationCodeGrant(configuration, current, {
          pkceCodeVerifier: pending.codeVerifier,
          expectedState: pending.state,
        });
        identity = await identityOf(configuration, tokens);
      } catch (err) {
        ctx.logger.warn({ err: (err as Error).message }, 'portal sign-in failed');
        res.status(400).send(messagePage('Sign-in failed', 'The identity provider did not confirm the sign-in. Try again.', 'bad'));
        return;
      }
      const decision = await resolveOidcUser(ctx, identity);
      if ('refused' in decision) {
        res.status(403).send(messagePage(decision.refused.title, decision.refused.message, 'bad'));
        return;
      }
      await startPortalSession(ctx, res, { userId: decision.user.id, tenantId: decision.user.tenantId });
      res.redirect(303, safeNext(pending.next));
    },
  };
}
