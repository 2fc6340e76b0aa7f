// API keys and the encryption keyring.
import { resealCredentials } from '../../features/accounts/store/accounts.js';
import { createApiKey, listApiKeys, revokeApiKey } from '../../features/accounts/store/api-keys.js';
import { resealApprovals } from '../../features/approvals/store/approvals.js';
import { resealClientRegistrations } from '../../platform/database/mcp-client-registrations.js';
import { resealTenantUpstreams } from '../../platform/database/tenant-upstream-servers.js';
import { resealMcpTasks } from '../../surfaces/mcp/store/mcp-tasks.js';
import { type Command, need, oneOptionCommand, requireUser, tenantCommand, UsageError } from './cli.js';

export const keyCommands: Command[] = [
  {
    name: 'create-key',
    synopsis: '--email <email> [--label <text>]',
    summary: 'Create an API key for a user; it is printed once',
    details: 'Only its SHA-256 is stored: keep the printed key, it cannot be shown again.',
    options: { email: { type: 'string' }, label: { type: 'string' } },
    async run(values, _, ctx) {
      const email = need(values, 'email');
      const db = await ctx.db();
      const user = await requireUser(db, email);
      const { id, key } = await createApiKey(db, { tenantId: user.tenantId, userId: user.id, label: values.label as string | undefined });
      ctx.out({ id, key, note: 'Store this key now: it is shown only once.' });
    },
  },
  tenantCommand({ name: 'list-keys', summary: 'List API keys (never the keys themselves)' }, (db, tenant) => listApiKeys(db, tenant.id)),
  oneOptionCommand({ name: 'revoke-key', summary: 'Revoke an API key', option: 'id', placeholder: 'keyId' }, async (id, ctx) => {
    if (!(await revokeApiKey(await ctx.db(), id))) throw new UsageError(`no active key ${id}`);
    ctx.out(`revoked ${id}`);
  }),
  {
    name: 'reseal',
    synopsis: '',
    summary: 'Re-encrypt stored credentials (and upstream client registrations and secrets, approvals, MCP tasks) under the active key',
    details: 'The active key is ENCRYPTION_ACTIVE_KEY_ID (default: the first of ENCRYPTION_KEYS).',
    async run(_, __, ctx) {
      const keyring = ctx.keyring();
      const db = await ctx.db();
      ctx.out(`re-sealed ${await resealCredentials(db, keyring)} credentials under key ${keyring.activeKeyId}`);
      ctx.out(`re-sealed ${await resealClientRegistrations(db, keyring)} upstream client registrations under key ${keyring.activeKeyId}`);
      ctx.out(`re-sealed ${await resealTenantUpstreams(db, keyring)} tenant upstream client secrets under key ${keyring.activeKeyId}`);
      ctx.out(`re-sealed ${await resealApprovals(db, keyring)} approvals under key ${keyring.activeKeyId}`);
      ctx.out(`re-sealed ${await resealMcpTasks(db, keyring)} MCP tasks under key ${keyring.activeKeyId}`);
    },
  },
  {
    name: 'payload-keys',
    synopsis: '',
    summary: "Print the payload keys alone, for agents' workers (SWITCHBOARD_PAYLOAD_KEYS)",
    details:
      "Derived from ENCRYPTION_KEYS: they seal and open Temporal payloads but no credential at rest. Give an agent's worker SWITCHBOARD_PAYLOAD_KEYS instead of ENCRYPTION_KEYS (it cannot open payloads sealed before keys were derived per purpose).",
    async run(_, __, ctx) {
      ctx.out(ctx.keyring().exportPayloadKeys());
    },
  },
];
