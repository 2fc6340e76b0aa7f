// Source keys: let another Switchboard instance use this one as a remote source (README, "Remote sources").
import { newAssertionKeyPair } from '../../features/sources/assertion.js';
import { createSourceKey } from '../../features/sources/store/source-keys.js';
import { type Command, need, requireUser, UsageError } from './cli.js';

export const sourceCommands: Command[] = [
  {
    name: 'create-source-key',
    synopsis: '--email <template user> --source <name>',
    summary: 'Create a source key for another instance; key and assertionKey are printed once',
    details:
      'The other instance puts both in its SWITCHBOARD_SOURCES entry. Each of its users then acts here as a user of\n' +
      "their own (created on first use in the template user's tenant, with the template's roles), never as the\n" +
      'template user. --source names the other instance; a new key for the same name keeps its delegates.\n' +
      'Revoke with revoke-key --id <id>.',
    options: { email: { type: 'string' }, source: { type: 'string' } },
    async run(values, _, ctx) {
      const email = need(values, 'email');
      const source = need(values, 'source');
      if (!/^[a-z0-9][a-z0-9-]{0,30}$/.test(source)) throw new UsageError('--source: lower-case letters, digits and dashes, up to 31');
      const db = await ctx.db();
      const user = await requireUser(db, email);
      const { privateKey, publicKey } = newAssertionKeyPair();
      const { id, key } = await createSourceKey(db, { tenantId: user.tenantId, templateUserId: user.id, source, publicKey });
      ctx.out({
        id,
        key,
        assertionKey: privateKey,
        note: 'Store key and assertionKey now (the other instance\'s SWITCHBOARD_SOURCES "apiKey" and "assertionKey"): they are shown only once.',
      });
    },
  },
];
