// Organisation (tenant-scoped) accounts and whom they are shared with. Never prints a secret.

import { z } from 'zod';
import { accountLabelSchema } from '../../core/account-label.js';
import { roleNameSchema } from '../../core/policy.js';
import {
  type Account,
  deleteAccount,
  findTenantAccount,
  insertAccount,
  listTenantAccounts,
  setSharingRoles,
} from '../../features/accounts/store/accounts.js';
import type { Queryable } from '../../platform/database/queryable.js';
import {
  type Context,
  checkEach,
  type Group,
  list,
  need,
  oneOf,
  oneOptionCommand,
  requireTenant,
  tenantCommand,
  UsageError,
  type Values,
} from './cli.js';
import { knownIntegrationsOf } from './known-providers.js';

/** `*` shares with every member of the tenant. */
const sharingRole = z.literal('*').or(roleNameSchema);

const summary = (a: Account) => ({
  id: a.id,
  integration: a.integration,
  label: a.label,
  isDefault: a.isDefault,
  sharingRoles: a.sharingRoles,
  status: a.status,
  hasCredential: a.hasCredential,
});

/** The deployment's integrations and the tenant's own upstream servers. */
async function integration(values: Values, ctx: Context, tenantId: string): Promise<string> {
  const name = need(values, 'integration');
  const known = await knownIntegrationsOf(ctx.config, ctx.db, tenantId, [name]);
  const provider = known.find((p) => p.name === name);
  if (!provider) throw new UsageError(`unknown integration "${name}" (known: ${known.map((p) => p.name).join(', ')})`);
  if (provider.auth === 'none') throw new UsageError(`${name} needs no account: it connects with no credential and is always connected`);
  return name;
}

async function requireOrgAccount(db: Queryable, id: string): Promise<Account> {
  const account = await findTenantAccount(db, id);
  if (!account) throw new UsageError(`unknown organisation account ${id}`);
  return account;
}

export const orgAccountGroup: Group = {
  name: 'org-account',
  summary: "Manage the organisation's accounts and the roles they are shared with",
  commands: [
    {
      name: 'create',
      synopsis: '--tenant <id> --integration <name> --label <text> [--share-with role,role]',
      summary: 'Create an organisation account with no credential yet; prints its id',
      details: [
        'Its credential is connected later in the portal. The first organisation account of an integration',
        'becomes its default. --share-with lists the roles whose members may use it ("*": everyone);',
        'without it the account is shared with nobody until `org-account share`. Needs ENCRYPTION_KEYS.',
      ].join('\n'),
      options: { tenant: { type: 'string' }, integration: { type: 'string' }, label: { type: 'string' }, 'share-with': { type: 'string' } },
      async run(values, _, ctx) {
        const tenantId = need(values, 'tenant');
        const name = await integration(values, ctx, tenantId);
        const [label] = checkEach('label', [need(values, 'label')], accountLabelSchema);
        const sharingRoles = values['share-with'] === undefined ? [] : checkEach('share-with', list(values, 'share-with'), sharingRole);
        const keyring = ctx.keyring();
        const db = await ctx.db();
        await requireTenant(db, tenantId);
        const account = await insertAccount(db, keyring, { tenantId, ownerUserId: null, integration: name, label, sharingRoles });
        ctx.out(account.id);
      },
    },
    {
      name: 'share',
      synopsis: '--id <accountId> (--roles eng,ops | --no-roles)',
      summary: "Replace an organisation account's sharing roles",
      details: 'Members with one of the roles may use the account ("*": everyone); --no-roles shares it with nobody.',
      options: { id: { type: 'string' }, roles: { type: 'string' }, 'no-roles': { type: 'boolean' } },
      async run(values, _, ctx) {
        const id = need(values, 'id');
        oneOf(values, 'roles', 'no-roles');
        const roles = values['no-roles'] ? [] : checkEach('roles', list(values, 'roles'), sharingRole);
        const db = await ctx.db();
        const account = await requireOrgAccount(db, id);
        ctx.out(summary((await setSharingRoles(db, account.tenantId, id, roles))!));
      },
    },
    tenantCommand({ name: 'list', summary: "List a tenant's organisation accounts (never a credential)" }, async (db, tenant) =>
      (await listTenantAccounts(db, tenant.id)).map(summary),
    ),
    oneOptionCommand(
      {
        name: 'delete',
        summary: 'Delete an organisation account and its stored credential',
        details: 'The credential is not revoked at the service; revoke it there if it may have leaked.',
        option: 'id',
        placeholder: 'accountId',
      },
      async (id, ctx) => {
        const db = await ctx.db();
        const account = await requireOrgAccount(db, id);
        await deleteAccount(db, account.tenantId, id);
        ctx.out(`deleted ${id}`);
      },
    ),
  ],
};
