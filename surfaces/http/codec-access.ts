import type { Request } from 'express';
import { authenticateApiKey } from '../../features/accounts/store/api-keys.js';
import { getUser } from '../../features/accounts/store/users.js';
import type { ServiceContext } from '../../features/context.js';
import { readPortalUser } from '../portal/session-cookie.js';

/**
 * Who may use the codec endpoint. Reading every tenant's payloads is a platform privilege, so it
 * is granted by the operator's environment, never by data a tenant controls (roles, names,
 * emails in its own tenant): a caller is a codec operator when the API key or portal session
 * belongs to a user of CODEC_OPERATOR_TENANT whose email is listed in CODEC_OPERATORS. A source key
 * (features/sources/delegation.ts) is never a codec credential: it is held by another instance's
 * operator and acts only as that instance's delegates, whoever its template user is.
 */

export type CodecCaller =
  | { kind: 'operator'; userId: string; via: 'api-key' | 'portal' }
  | { kind: 'open' } // CODEC_AUTH=none
  | { kind: 'anonymous' }
  | { kind: 'refused'; userId: string };

export async function codecCallerOf(ctx: ServiceContext, req: Request): Promise<CodecCaller> {
  if (ctx.config.CODEC_AUTH === 'none') return { kind: 'open' };
  const key = /^Bearer\s+(\S+)$/i.exec(req.get('authorization') ?? '')?.[1];
  const viaKey = key ? await authenticateApiKey(ctx.pool, key) : undefined;
  if (viaKey?.sourceKey) return { kind: 'refused', userId: viaKey.userId };
  const viaPortal = viaKey ? undefined : await readPortalUser(ctx, req);
  const userId = viaKey?.userId ?? viaPortal?.userId;
  if (!userId) return { kind: 'anonymous' };
  // Read fresh: removing someone from the tenant or the list ends their access at once.
  const user = await getUser(ctx.pool, userId);
  const { CODEC_OPERATOR_TENANT: tenant, CODEC_OPERATORS: emails } = ctx.config;
  if (!user || !tenant || user.tenantId !== tenant || !emails.has(user.email.toLowerCase())) return { kind: 'refused', userId };
  return { kind: 'operator', userId, via: viaKey ? 'api-key' : 'portal' };
}
