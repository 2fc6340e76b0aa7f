// The admin CLI: tenants, users with roles, API keys, sign-in links, key rotation.
import { parseArgs } from 'node:util';
import { createLogger } from '../server/logger.js';
import { resealCredentials } from '../store/accounts.js';
import { createApiKey, listApiKeys, revokeApiKey } from '../store/api-keys.js';
import { createLoginToken } from '../store/login-tokens.js';
import { createTenant, listTenants } from '../store/tenants.js';
import { createUser, findUserByEmail, listUsers } from '../store/users.js';
import { configFromEnv, prepareDatabase, requireSecrets } from './support/services.js';

const USAGE = `Usage: npm run admin -- <command> [options]

Commands:
  create-tenant --name <name>                          Create a tenant; prints its id
  list-tenants                                         List tenants
  create-user --tenant <id> --email <email> [--role <r>]...
                                                       Create a user (roles default to "member")
  list-users --tenant <id>                             List a tenant's users
  create-key --email <email> [--label <text>]          Create an API key; it is printed once
  list-keys --tenant <id>                              List API keys (never the keys themselves)
  revoke-key --id <keyId>                              Revoke an API key
  login-link <email>                                   Print a one-time portal sign-in link (15 minutes)
  reseal                                               Re-encrypt stored credentials under the active key
`;

class UsageError extends Error {}

function need(values: Record<string, unknown>, name: string): string {
  const v = values[name];
  if (typeof v !== 'string' || !v) throw new UsageError(`missing --${name}`);
  return v;
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(USAGE);
    return;
  }
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    strict: true,
    options: {
      name: { type: 'string' },
      tenant: { type: 'string' },
      email: { type: 'string' },
      role: { type: 'string', multiple: true },
      label: { type: 'string' },
      id: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  const config = configFromEnv();
  const logger = createLogger({ level: 'warn' });
  const pool = await prepareDatabase(config, logger);
  const out = (v: unknown) => process.stdout.write(`${typeof v === 'string' ? v : JSON.stringify(v, null, 2)}\n`);
  try {
    switch (command) {
      case 'create-tenant':
        out(await createTenant(pool, { name: need(values, 'name') }));
        break;
      case 'list-tenants':
        out(await listTenants(pool));
        break;
      case 'create-user':
        out(await createUser(pool, { tenantId: need(values, 'tenant'), email: need(values, 'email'), roles: values.role }));
        break;
      case 'list-users':
        out(await listUsers(pool, need(values, 'tenant')));
        break;
      case 'create-key': {
        const user = await findUserByEmail(pool, need(values, 'email'));
        if (!user) throw new UsageError(`no user with email ${values.email}`);
        const { id, key } = await createApiKey(pool, { tenantId: user.tenantId, userId: user.id, label: values.label });
        out({ id, key, note: 'Store this key now: it is shown only once.' });
        break;
      }
      case 'list-keys':
        out(await listApiKeys(pool, need(values, 'tenant')));
        break;
      case 'revoke-key':
        if (!(await revokeApiKey(pool, need(values, 'id')))) throw new UsageError(`no active key ${values.id}`);
        out(`revoked ${values.id}`);
        break;
      case 'login-link': {
        const email = positionals[0] ?? values.email;
        if (!email) throw new UsageError('login-link needs an email');
        const user = await findUserByEmail(pool, email);
        if (!user) throw new UsageError(`no user with email ${email}`);
        out(`${config.PUBLIC_BASE_URL}/portal/login-link?token=${await createLoginToken(pool, user.id)}`);
        break;
      }
      case 'reseal': {
        const { keyring } = requireSecrets(config);
        out(`re-sealed ${await resealCredentials(pool, keyring)} credentials under key ${keyring.activeKeyId}`);
        break;
      }
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } finally {
    await pool.end();
  }
}

main(process.argv.slice(2)).catch((err) => {
  const usage = err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
  process.stderr.write(`admin: ${(err as Error).message}${usage ? ' (see --help)' : ''}\n`);
  process.exit(usage ? 2 : 1);
});
