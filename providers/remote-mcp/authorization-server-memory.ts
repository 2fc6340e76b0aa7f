import { setTimeout } from 'node:timers/promises';
import {
  type AuthorizationServerMetadata,
  type DiscoveredAuthorization,
  discoverAuthorization,
  type EgressOptions,
  fetchAuthorizationServerMetadata,
} from './oauth-client/index.js';

/** Authorization server metadata is read again after this (refreshes reuse it meanwhile). */
const METADATA_TTL_MS = 10 * 60_000;
/** A portal page waits at most this for the consent origin of a server nobody connected yet… */
const ORIGIN_DISCOVERY_MS = 5_000;
/** …and after a failed discovery does not try again for this long. */
const ORIGIN_RETRY_MS = 30_000;

/** What one upstream's OAuth has learned of its authorization servers, kept for this process. */
interface AuthorizationServerMemory {
  /** Discovers the server's authorization server afresh (a server may move it), and remembers it. */
  discover(): Promise<DiscoveredAuthorization>;
  /** An issuer's metadata: remembered if recent, else read again (a callback or refresh names its issuer). */
  authorizationServer(issuer: string): Promise<AuthorizationServerMetadata>;
  /** The origin of the consent page, if any discovery has learned it (see below). */
  consentOrigin(): Promise<string | undefined>;
}

/**
 * The memory of one upstream MCP server (`serverUrl`), whose authorization server must be
 * `expectedIssuer` when the entry names one (a pre-registered client's issuer).
 */
export function authorizationServerMemory(
  serverUrl: string,
  expectedIssuer: string | undefined,
  egress: EgressOptions,
): AuthorizationServerMemory {
  const metadata = new Map<string, { as: AuthorizationServerMetadata; at: number }>();
  let origin: string | undefined;
  let originFailedAt = Number.NEGATIVE_INFINITY;

  const remember = (as: AuthorizationServerMetadata) => {
    metadata.set(as.issuer, { as, at: Date.now() });
    if (as.authorization_endpoint && URL.canParse(as.authorization_endpoint)) origin = new URL(as.authorization_endpoint).origin;
  };
  const discover = () => discoverAuthorization(serverUrl, { ...egress, expectedIssuer });

  return {
    async discover() {
      const found = await discover();
      remember(found.authorizationServer);
      return found;
    },

    async authorizationServer(issuer) {
      const known = metadata.get(issuer);
      if (known && Date.now() - known.at < METADATA_TTL_MS) return known.as;
      const as = await fetchAuthorizationServerMetadata(issuer, egress);
      remember(as);
      return as;
    },

    async consentOrigin() {
      // Learned by any discovery; a portal page showing the Connect button runs one (bounded, and not
      // again for a while after a failure) when no consent has been asked for since the start.
      if (origin || Date.now() - originFailedAt < ORIGIN_RETRY_MS) return origin;
      const discovery = discover().then(
        (found) => remember(found.authorizationServer),
        () => {
          originFailedAt = Date.now();
        },
      );
      await Promise.race([discovery, setTimeout(ORIGIN_DISCOVERY_MS, undefined, { ref: false })]);
      return origin;
    },
  };
}
