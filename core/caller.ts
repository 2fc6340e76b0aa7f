/**
 * Who a request acts as. Derived from the bearer key (or a signed-in portal session), never from
 * arguments. Every narrower "whose is this" type of the code base is a `Pick` of it, so one
 * definition says what identity means.
 */
export interface Caller {
  tenantId: string;
  userId: string;
  roles: string[];
  keyId?: string;
  /** The key is a remote source's (features/sources/store/source-keys.ts): it acts only for the delegate its assertion names. */
  sourceKey?: boolean;
}

/** Whose a thing is: the tenant and user of a caller, without its roles or key. */
export type CallerOwner = Pick<Caller, 'tenantId' | 'userId'>;
