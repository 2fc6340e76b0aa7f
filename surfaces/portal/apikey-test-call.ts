import { InFlightLimit } from '../../core/in-flight-limit.js';
import { checkContext } from '../../features/connections/check-context.js';
import { forTenant } from '../../features/connections/services.js';
import type { ServiceContext } from '../../features/context.js';
import { ProviderHttpError, ResponseTooLarge } from '../../providers/sdk/http.js';
import type { AccountIdentity, Provider } from '../../providers/sdk/index.js';
import type { SignedIn } from './signed-in.js';

/**
 * Before an API key is saved, Switchboard makes one call with it (the provider's `identify`): a
 * key the service refuses is never stored, and the account is labelled with what the service says.
 */

const TEST_CALL_TIMEOUT_MS = 10_000;

/**
 * Key submissions (and so test calls) in flight at once in one process: per user, and per tenant
 * (an administrator can make users). A person enters one key at a time; someone posting hundreds
 * of made-up keys at once would otherwise have this process open hundreds of sessions at the
 * service, with the CPU that costs every other tenant. Beyond the bound the form answers 429 at
 * once, before any lookup: the bound is taken on the session cookie's signed claims, so a burst
 * queues no query in the pool every tenant shares.
 */
export const KEY_TESTS_IN_FLIGHT = { perUser: 2, perTenant: 8 } as const;
/** What a refused submission is told to wait, in seconds (Retry-After): about one test call's answer. */
export const KEY_TEST_RETRY_AFTER_SEC = 5;

/** The bound above, for one router's submissions. */
export function keyTestLimit(): InFlightLimit {
  return new InFlightLimit([KEY_TESTS_IN_FLIGHT.perUser, KEY_TESTS_IN_FLIGHT.perTenant]);
}

/**
 * A place for one submission of this user, or undefined when they (or their tenant) have as many
 * in flight as allowed. Taken on the session cookie's signed claims, before the store is read.
 */
export function enterKeyTest(limit: InFlightLimit, who: { userId: string; tenantId: string }): (() => void) | undefined {
  return limit.tryEnter(keyTestKeys(who));
}

/** The keys the bound is counted under: the user's, and their tenant's. */
export function keyTestKeys(who: { userId: string; tenantId: string }): string[] {
  return [`user:${who.userId}`, `tenant:${who.tenantId}`];
}

type TestOutcome = { ok: true; identity?: AccountIdentity } | { ok: false; status: number; message: string };

/** The one test call before saving: the provider's `identify`, with the submitted key. */
export async function testKey(
  base: ServiceContext,
  me: SignedIn,
  provider: Provider,
  fields: Record<string, string>,
): Promise<TestOutcome> {
  const { name, displayName } = provider.manifest;
  if (!provider.identify) return { ok: true };
  const ctx = await forTenant(base, me.caller.tenantId);
  const logger = ctx.logger.child({ integration: name, userId: me.user.id });
  try {
    const identity = await provider.identify(
      checkContext(ctx, {
        provider,
        credential: { type: 'apikey', fields },
        caller: { tenantId: me.caller.tenantId, userId: me.user.id },
        logger,
        timeoutMs: TEST_CALL_TIMEOUT_MS,
      }),
    );
    return { ok: true, identity };
  } catch (err) {
    // Only the status is logged: a service may echo the key in its error body.
    if (err instanceof ProviderHttpError && (err.status === 401 || err.status === 403)) {
      logger.info({ status: err.status }, 'the service refused an API key');
      return {
        ok: false,
        status: 400,
        message: `${displayName} refused this key (HTTP ${err.status}). Nothing was saved; check the key and try again.`,
      };
    }
    const why =
      err instanceof ProviderHttpError
        ? `answered HTTP ${err.status}`
        : err instanceof ResponseTooLarge
          ? `answered more than ${err.maxBytes} bytes`
          : 'could not be reached';
    logger.warn({ err: err instanceof ProviderHttpError ? err.message : (err as Error).name }, 'could not test an API key');
    return {
      ok: false,
      status: 502,
      message: `${displayName} ${why} when Switchboard tested the key. Nothing was saved; try again later.`,
    };
  }
}
