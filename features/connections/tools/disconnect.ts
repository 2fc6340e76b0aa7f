import { z } from 'zod';
import { MetaToolError } from '../../../core/errors.js';
import { listUsableAccounts } from '../../accounts/store/accounts.js';
import { defineMetaTool } from '../../meta-tool.js';
import { disconnectAccount } from '../disconnect.js';

export const disconnect = defineMetaTool({
  name: 'disconnect',
  description:
    "Disconnect one of the user's own accounts: deletes its stored credential and revokes it at the service when the " +
    'service supports revocation. `account` is an id or label from list_connections; without it, the default account of ' +
    '`integration` is disconnected. Organisation accounts are managed by an administrator in the portal.',
  input: z
    .object({
      integration: z.string().min(1).max(100).optional(),
      account: z.string().min(1).max(200).optional(),
    })
    .strict()
    .refine((a) => a.integration || a.account, { message: 'give integration, account, or both' }),
  async handler(ctx, caller, args) {
    const own = (await listUsableAccounts(ctx.pool, caller, args.integration)).filter((a) => a.scope === 'user');
    const target = args.account
      ? own.find((a) => a.id === args.account || a.label === args.account)
      : (own.find((a) => a.isDefault) ?? own[0]);
    if (!target) throw new MetaToolError({ error: `No connected account matches ${args.account ?? args.integration}` }, 404);
    const { revoked } = await disconnectAccount(ctx, target);
    return { disconnected: true, integration: target.integration, account: target.id, revoked };
  },
});
