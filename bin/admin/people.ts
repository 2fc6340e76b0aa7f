// Tenants and their users.
import { roleNameSchema } from '../../core/policy.js';
import { createLoginToken } from '../../features/accounts/store/login-tokens.js';
import { createTenant, listTenants } from '../../features/accounts/store/tenants.js';
import { createUser, endUserSessions, listUsers, setUserRoles, unbindOidcIdentity } from '../../features/accounts/store/users.js';
import {
  type Command,
  type Context,
  checkEach,
  need,
  oneOptionCommand,
  requireTenant,
  requireUser,
  tenantCommand,
  UsageError,
  type Values,
} from './cli.js';

const roles = (values: Values): string[] | undefined => {
  const given = values.role as string[] | undefined;
  return given && checkEach('role', [...new Set(given)], roleNameSchema);
};

type Db = Awaited<ReturnType<Context['db']>>;

/** A command about one user, named by `<email>` (or `--email`). */
function userCommand(
  name: string,
  summary: string,
  act: (db: Db, user: Awaited<ReturnType<typeof requireUser>>, ctx: Context) => Promise<void>,
  details?: string,
): Command {
  return {
    name,
    synopsis: '<email>',
    summary,
    details,
    options: { email: { type: 'string' } },
    positionals: ['email'],
    async run(values, positionals, ctx) {
      const email = positionals[0] ?? values.email;
      if (typeof email !== 'string' || !email) throw new UsageError('missing <email>');
      const db = await ctx.db();
      await act(db, await requireUser(db, email), ctx);
    },
  };
}

export const peopleCommands: Command[] = [
  oneOptionCommand(
    { name: 'create-tenant', summary: 'Create a tenant; prints it with its id', option: 'name', placeholder: 'name' },
    async (name, ctx) => ctx.out(await createTenant(await ctx.db(), { name })),
  ),
  {
    name: 'list-tenants',
    synopsis: '',
    summary: 'List tenants with their settings',
    async run(_, __, ctx) {
      ctx.out(await listTenants(await ctx.db()));
    },
  },
  {
    name: 'create-user',
    synopsis: '--tenant <id> --email <email> [--role <r>]...',
    summary: 'Create a user (roles default to "member")',
    options: { tenant: { type: 'string' }, email: { type: 'string' }, role: { type: 'string', multiple: true } },
    async run(values, _, ctx) {
      const [tenantId, email, userRoles] = [need(values, 'tenant'), need(values, 'email'), roles(values)];
      const db = await ctx.db();
      await requireTenant(db, tenantId);
      try {
        ctx.out(await createUser(db, { tenantId, email, roles: userRoles }));
      } catch (err) {
        if ((err as { code?: string }).code === '23505') throw new Error(`a user with email ${email} already exists`);
        throw err;
      }
    },
  },
  tenantCommand({ name: 'list-users', summary: "List a tenant's users" }, (db, tenant) => listUsers(db, tenant.id)),
  {
    name: 'set-roles',
    synopsis: '--email <email> --role <r> [--role <r>]...',
    summary: "Replace a user's roles",
    details: 'The roles given are the whole new set; the old ones are dropped.',
    options: { email: { type: 'string' }, role: { type: 'string', multiple: true } },
    async run(values, _, ctx) {
      const email = need(values, 'email');
      const newRoles = roles(values);
      if (!newRoles?.length) throw new UsageError('missing --role');
      const db = await ctx.db();
      const user = await requireUser(db, email);
      ctx.out(await setUserRoles(db, user.id, newRoles));
    },
  },
  userCommand('login-link', 'Print a one-time portal sign-in link (15 minutes)', async (db, user, ctx) =>
    ctx.out(`${ctx.config.PUBLIC_BASE_URL}/portal/login-link?token=${await createLoginToken(db, user.id)}`),
  ),
  userCommand('sign-out', 'End every portal session of a user (all their browsers)', async (db, user, ctx) => {
    await endUserSessions(db, user.id);
    ctx.out(`signed out ${user.email} everywhere`);
  }),
  userCommand(
    'unbind-sign-in',
    "Release a user's single sign-on identity (their next verified sign-in binds again)",
    async (db, user, ctx) => {
      await unbindOidcIdentity(db, user.id);
      ctx.out(`released the sign-in identity of ${user.email}`);
    },
    'For a user whose identity provider account changed (a new subject, or a new provider). Also ends their sessions.',
  ),
];
