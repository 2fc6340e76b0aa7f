import type { Request } from 'express';
import type { Caller } from '../../core/caller.js';
import type { ServiceContext } from '../context.js';
import { ASSERTION_HEADER, verifyAssertion } from './assertion.js';
import { delegateUser, findSourceKey } from './store/source-keys.js';

/**
 * The remote side of a source: a request made with a source key acts as the delegate of the local
 * user its assertion names, never as the key's own user. A source key without a valid assertion,
 * or an assertion with an ordinary key, is refused.
 */
type Delegation = { caller: Caller } | { refused: string };

export async function resolveDelegation(ctx: ServiceContext, keyCaller: Caller, req: Request): Promise<Delegation> {
  const header = req.headers[ASSERTION_HEADER];
  const assertion = typeof header === 'string' ? header : undefined;
  // Known from the key lookup itself, so an ordinary key costs no second query here.
  const sourceKey = keyCaller.sourceKey && keyCaller.keyId ? await findSourceKey(ctx.pool, keyCaller.keyId) : undefined;
  if (!sourceKey) {
    return header === undefined ? { caller: keyCaller } : { refused: `${ASSERTION_HEADER} is only accepted with a source key` };
  }
  if (!assertion) return { refused: `A source key acts only for a user named by a ${ASSERTION_HEADER} assertion` };
  const identity = await verifyAssertion(sourceKey.publicKey, assertion);
  if (!identity) return { refused: `The ${ASSERTION_HEADER} assertion is not valid for this source key, or it expired` };
  const delegate = await delegateUser(ctx.pool, sourceKey, { tenantId: identity.tenant, userId: identity.user });
  return { caller: { tenantId: sourceKey.tenantId, userId: delegate.userId, roles: delegate.roles, keyId: keyCaller.keyId } };
}
