// The admin CLI: tenants, users with roles, API keys, sign-in links, key rotation, tenant settings,
// organisation accounts and tenants' own upstream MCP servers. This module dispatches; each group of commands is a module beside it.
// bin/admin.ts runs it with the process's streams and environment; tests call runAdmin in-process.
import { parseArgs } from 'node:util';
import { type Config, ConfigError } from '../../core/config.js';
import type { Pool } from '../../platform/database/database.js';
import { Keyring } from '../../platform/database/keyring.js';
import { createLogger } from '../../platform/telemetry/logger.js';
import { type Command, type Context, type Group, PROGRAM, UsageError } from './cli.js';
import { keyCommands } from './keys.js';
import { orgAccountGroup } from './org-accounts.js';
import { peopleCommands } from './people.js';
import { registryGroup } from './registry.js';
import { settingsGroup } from './settings.js';
import { sourceCommands } from './sources.js';
import { upstreamGroup } from './upstreams.js';

/** Where a run writes, and the environment it reads instead of process.env. */
export interface AdminIO {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
  env: Record<string, string | undefined>;
}

const ENTRIES: (Command | Group)[] = [
  ...peopleCommands,
  ...keyCommands,
  ...sourceCommands,
  settingsGroup,
  orgAccountGroup,
  upstreamGroup,
  registryGroup,
];

const isGroup = (entry: Command | Group): entry is Group => 'commands' in entry;
const isHelp = (arg: string) => arg === '--help' || arg === '-h';

/** `name synopsis` with the summary beside it, or below when the line is long. */
function row(name: string, synopsis: string, summary: string): string {
  const left = `  ${[name, synopsis.split('\n')[0]].filter(Boolean).join(' ')}`;
  return left.length < 54 ? `${left.padEnd(55)}${summary}` : `${left}\n${' '.repeat(55)}${summary}`;
}

function usage(): string {
  const rows = ENTRIES.flatMap((e) =>
    isGroup(e)
      ? e.commands.map((c) => row(`${e.name} ${c.name}`, c.synopsis.includes('\n') ? '--tenant <id> [options]' : c.synopsis, c.summary))
      : [row(e.name, e.synopsis, e.summary)],
  );
  return `Usage: ${PROGRAM} <command> [options]

Commands:
${rows.join('\n')}

Every command answers --help. Reads DATABASE_URL and DATABASE_SCHEMA (README, "Configuration").
Exit codes: 0 done, 1 failed, 2 bad argument or unknown id.
`;
}

function groupUsage(group: Group): string {
  return `Usage: ${PROGRAM} ${group.name} <subcommand> [options]

${group.summary}.

Subcommands:
${group.commands.map((c) => row(c.name, '', c.summary)).join('\n')}

Run "${PROGRAM} ${group.name} <subcommand> --help" for its options.
`;
}

function commandUsage(path: string, command: Command): string {
  return `Usage: ${PROGRAM} ${path}${command.synopsis ? ` ${command.synopsis}` : ''}

${command.summary}.
${command.details ? `\n${command.details}\n` : ''}`;
}

/** node:util's parse errors, in the CLI's words. */
function parseError(err: Error & { code?: string }): UsageError {
  const quoted = /'([^']+)'/.exec(err.message)?.[1] ?? '';
  if (err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return new UsageError(`unknown option ${quoted}`);
  if (err.code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') return new UsageError(`unexpected argument "${quoted}"`);
  return new UsageError(err.message.split('. ')[0]!.replace(/^Option/, 'option'));
}

/** Finds the command, or prints the help asked for and returns undefined. */
function resolve(argv: string[], io: AdminIO): { path: string; command: Command; args: string[] } | undefined {
  const print = (text: string): undefined => {
    io.stdout(text);
  };
  const [first, ...rest] = argv;
  if (!first || isHelp(first) || first === 'help') return print(usage());
  const entry = ENTRIES.find((e) => e.name === first);
  if (!entry) throw new UsageError(`unknown command "${first}"`);
  let [path, command, args] = [first, entry as Command, rest];
  if (isGroup(entry)) {
    const [sub, ...subArgs] = rest;
    if (sub && isHelp(sub)) return print(groupUsage(entry));
    const names = entry.commands.map((c) => c.name).join(', ');
    if (!sub) throw new UsageError(`${first} needs a subcommand: ${names}`);
    const found = entry.commands.find((c) => c.name === sub);
    if (!found) throw new UsageError(`unknown ${first} subcommand "${sub}" (${names})`);
    [path, command, args] = [`${first} ${sub}`, found, subArgs];
  }
  const ownArgs = args.includes('--') ? args.slice(0, args.indexOf('--')) : args;
  if (ownArgs.some(isHelp)) return print(commandUsage(path, command));
  return { path, command, args };
}

async function main(argv: string[], io: AdminIO): Promise<number> {
  const found = resolve(argv, io);
  if (!found) return 0;
  const { command, args } = found;
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args, options: command.options ?? {}, allowPositionals: true, strict: true });
  } catch (err) {
    throw parseError(err as Error);
  }
  const { values, positionals } = parsed;
  const extra = positionals[command.positionals?.length ?? 0];
  if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"`);

  // Loaded only now: it brings in Temporal's packages, which help and argument errors do without.
  const { readConfig, prepareDatabase } = await import('../support/services.js');
  let config: Config;
  try {
    config = readConfig(io.env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    io.stderr(`${err.message}\nSee README.md, section "Configuration".\n`);
    return 2;
  }
  const logger = createLogger({ level: 'warn', destination: { write: (line: string) => io.stderr(line) } });
  let pool: Promise<Pool> | undefined;
  const ctx: Context = {
    config,
    db: () => (pool ??= prepareDatabase(config, logger)),
    keyring() {
      if (!config.ENCRYPTION_KEYS) throw new Error('ENCRYPTION_KEYS is not set (README, "Configuration")');
      return new Keyring(config.ENCRYPTION_KEYS, config.ENCRYPTION_ACTIVE_KEY_ID);
    },
    out: (v) => io.stdout(`${typeof v === 'string' ? v : JSON.stringify(v, null, 2)}\n`),
  };
  try {
    await command.run(values, positionals, ctx);
  } finally {
    await (await pool?.catch(() => undefined))?.end();
  }
  return 0;
}

/** One line, whatever the error: a connection refused arrives as an AggregateError with no message of its own. */
function oneLine(err: unknown): string {
  const e = err as { message?: string; code?: string; errors?: { message?: string }[] } | undefined;
  const text = e?.message || e?.errors?.map((x) => x.message).find(Boolean) || e?.code || String(err);
  return text.replace(/\s+/g, ' ').trim();
}

/**
 * Runs one admin command; resolves to its exit code (0 done, 1 failed, 2 bad argument, unknown id
 * or bad configuration). Never exits the process, and closes its database pool before resolving.
 */
export async function runAdmin(argv: string[], io: AdminIO): Promise<number> {
  try {
    return await main(argv, io);
  } catch (err) {
    const usageError = err instanceof UsageError;
    io.stderr(`admin: ${oneLine(err)}${usageError ? ' (see --help)' : ''}\n`);
    return usageError ? 2 : 1;
  }
}
