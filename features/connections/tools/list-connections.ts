import { z } from 'zod';
import type { Account } from '../../accounts/store/accounts.js';
import { listUsableAccounts } from '../../accounts/store/accounts.js';
import { defineMetaTool } from '../../meta-tool.js';

const accountView = (a: Account) => ({
  id: a.id,
  integration: a.integration,
  label: a.label,
  scope: a.scope,
  default: a.isDefault,
  status: a.status,
});

export const listConnections = defineMetaTool({
  name: 'list_connections',
  description:
    "List the accounts this user can use: their own first, then the organisation's shared with one of their roles. " +
    'Each has id, integration, label, scope (user|tenant), default and status (active|needs_reauth). ' +
    'Pass an id or label as `account` to execute_tools to pick one; needs_reauth means call connect again.',
  input: z.object({ integration: z.string().min(1).max(100).optional() }).strict(),
  async handler(ctx, caller, args) {
    const accounts = await listUsableAccounts(ctx.pool, caller, args.integration);
    return { connections: accounts.map(accountView) };
  },
});
