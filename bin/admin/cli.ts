// What every admin command shares: its shape, its context, and argument helpers.
import type { ParseArgsConfig } from 'node:util';
import type { z } from 'zod';
import type { Config } from '../../core/config.js';
import { getTenant, type Tenant } from '../../features/accounts/store/tenants.js';
import { findUserByEmail, type User } from '../../features/accounts/store/users.js';
import type { Pool } from '../../platform/database/database.js';
import type { Keyring } from '../../platform/database/keyring.js';
import type { Queryable } from '../../platform/database/queryable.js';

/** A bad or missing argument, or an id that names nothing: one line and exit code 2. */
export class UsageError extends Error {}

export type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;

export interface Context {
  config: Config;
  /** Connects (and migrates) on first use, so argument errors never wait for the database. */
  db(): Promise<Pool>;
  /** The keyring from ENCRYPTION_KEYS; exits when it is not configured. */
  keyring(): Keyring;
  out(value: unknown): void;
}

export interface Command {
  name: string;
  /** Arguments after the command name, e.g. `--tenant <id>`. */
  synopsis: string;
  summary: string;
  /** More lines for `--help`. */
  details?: string;
  options?: NonNullable<ParseArgsConfig['options']>;
  /** Names of the positional arguments it takes, in order. */
  positionals?: string[];
  run(values: Values, positionals: string[], ctx: Context): Promise<void>;
}

/** What `--help` says of a command, apart from its arguments. */
export type CommandText = Pick<Command, 'name' | 'summary' | 'details'>;

/** A command with one required option, `--<option> <placeholder>`, whose value is all it needs. */
export function oneOptionCommand(
  text: CommandText & { option: string; placeholder: string },
  act: (value: string, ctx: Context) => Promise<void>,
): Command {
  const { option, placeholder, ...about } = text;
  return {
    ...about,
    synopsis: `--${option} <${placeholder}>`,
    options: { [option]: { type: 'string' } },
    run: (values, _, ctx) => act(need(values, option), ctx),
  };
}

/** A command that prints something about one tenant, named by `--tenant <id>`. */
export function tenantCommand(text: CommandText, show: (db: Pool, tenant: Tenant) => Promise<unknown>): Command {
  return oneOptionCommand({ ...text, option: 'tenant', placeholder: 'id' }, async (tenantId, ctx) => {
    const db = await ctx.db();
    ctx.out(await show(db, await requireTenant(db, tenantId)));
  });
}

/** Commands under one name: `settings show`, `settings set`. */
export interface Group {
  name: string;
  summary: string;
  commands: Command[];
}

export const PROGRAM = 'npm run admin --';

export function need(values: Values, name: string): string {
  const v = values[name];
  if (typeof v !== 'string' || !v) throw new UsageError(`missing --${name}`);
  return v;
}

/** `a,b , c` → `['a', 'b', 'c']`, without repeats; an empty list is an error. */
export function list(values: Values, name: string): string[] {
  const items = [
    ...new Set(
      need(values, name)
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ];
  if (!items.length) throw new UsageError(`--${name} needs a comma-separated list`);
  return items;
}

/** Checks each item against a schema; the first bad one is a usage error naming the option. */
export function checkEach(option: string, items: string[], schema: z.ZodType<string>): string[] {
  for (const item of items) {
    const result = schema.safeParse(item);
    if (!result.success) throw new UsageError(`--${option}: "${item}" is not valid (${result.error.issues[0]?.message})`);
  }
  return items;
}

/** At most one of two options that contradict each other. */
export function oneOf(values: Values, a: string, b: string): void {
  if (values[a] !== undefined && values[b] !== undefined) throw new UsageError(`--${a} and --${b} cannot be used together`);
}

export async function requireTenant(db: Queryable, id: string): Promise<Tenant> {
  const tenant = await getTenant(db, id);
  if (!tenant) throw new UsageError(`unknown tenant ${id}`);
  return tenant;
}

export async function requireUser(db: Queryable, email: string): Promise<User> {
  const user = await findUserByEmail(db, email);
  if (!user) throw new UsageError(`no user with email ${email}`);
  return user;
}
