import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { runAdmin } from '../../bin/admin/main.js';
import { needsApproval } from '../../core/approval-policy.js';
import { hasConnectionRole, isProviderEnabled, isToolAllowed } from '../../core/policy.js';
import { findTenantAccount, listTenantAccounts } from '../../features/accounts/store/accounts.js';
import { listApiKeys } from '../../features/accounts/store/api-keys.js';
import { getTenant } from '../../features/accounts/store/tenants.js';
import { findUserByEmail } from '../../features/accounts/store/users.js';
import { createPool } from '../../platform/database/database.js';

const ROOT = join(import.meta.dirname, '..', '..');
/** A GitHub tool as the registry names it. */
const githubTool = (name: string, access: string) => ({
  tool: { name, access },
  flatName: `github_${name}`,
  qualifiedName: `github__${name}`,
});

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** The admin CLI on this file's schema: in-process through runAdmin, plus two real processes for the entry point. */
describe('admin CLI', () => {
  const schema = `adm_${randomBytes(5).toString('hex')}`;
  const env: Record<string, string | undefined> = {
    PATH: process.env.PATH,
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    DATABASE_URL: inject('testDatabaseUrl'),
    DATABASE_SCHEMA: schema,
    ENCRYPTION_KEYS: `test1:${randomBytes(32).toString('base64')}`,
    PORTAL_SIGNING_SECRET: randomBytes(32).toString('hex'),
  };
  const pool = createPool({ url: inject('testDatabaseUrl'), schema, poolMax: 2 });

  /** One run in this process, with its output collected. */
  async function inProcess(args: string[], runEnv = env): Promise<Run> {
    const [stdout, stderr]: string[][] = [[], []];
    const code = await runAdmin(args, { stdout: (s) => stdout.push(s), stderr: (s) => stderr.push(s), env: runEnv });
    return { code, stdout: stdout.join(''), stderr: stderr.join('') };
  }
  const admin = (...args: string[]) => inProcess(args);
  /** The admin CLI as an operator runs it: its own process. */
  const spawned = (...args: string[]) =>
    new Promise<Run>((resolve) => {
      execFile(process.execPath, ['--import', 'tsx', 'bin/admin.ts', ...args], { cwd: ROOT, env }, (err, stdout, stderr) => {
        resolve({ code: err ? Number(err.code) : 0, stdout, stderr });
      });
    });
  /** Runs and expects success; returns stdout. */
  const ok = async (...args: string[]) => {
    const run = await admin(...args);
    expect(run, `admin ${args.join(' ')}`).toMatchObject({ code: 0, stderr: '' });
    return run.stdout;
  };

  let tenantId = '';

  afterAll(async () => {
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await pool.end();
  });

  it('creates a tenant, a user with roles and an API key, and replaces the roles', async () => {
    tenantId = JSON.parse(await ok('create-tenant', '--name', 'Acme')).id;
    expect(tenantId).toMatch(/\S/);
    const user = JSON.parse(
      await ok('create-user', '--tenant', tenantId, '--email', 'ada@example.com', '--role', 'member', '--role', 'eng'),
    );
    expect(user).toMatchObject({ tenantId, email: 'ada@example.com', roles: ['member', 'eng'] });

    const [created, roles] = await Promise.all([
      ok('create-key', '--email', 'ada@example.com', '--label', 'laptop'),
      ok('set-roles', '--email', 'ada@example.com', '--role', 'ops', '--role', 'admin'),
    ]);
    const { id, key } = JSON.parse(created);
    expect(key).toMatch(/^sbk_/);
    expect(JSON.parse(roles).roles).toEqual(['ops', 'admin']);

    expect((await findUserByEmail(pool, 'ada@example.com'))?.roles).toEqual(['ops', 'admin']);
    const keys = await listApiKeys(pool, tenantId);
    expect(keys.map((k) => k.id)).toEqual([id]);
    expect(JSON.stringify(keys)).not.toContain(key);
  });

  it('finding 8 + 9: sign-out ends every portal session of a user; unbind-sign-in releases their OIDC identity', async () => {
    const versionOf = async () =>
      (await pool.query('SELECT session_version AS v, oidc_subject AS sub FROM users WHERE lower(email) = $1', ['ada@example.com']))
        .rows[0];
    await pool.query(
      `UPDATE users SET oidc_issuer = 'https://id.example', oidc_subject = 'ada-sub' WHERE lower(email) = 'ada@example.com'`,
    );
    const before = await versionOf();
    expect(await ok('sign-out', 'ada@example.com')).toContain('signed out ada@example.com everywhere');
    expect((await versionOf()).v).toBe(before.v + 1);
    expect(await ok('unbind-sign-in', 'ada@example.com')).toContain('released the sign-in identity of ada@example.com');
    expect(await versionOf()).toEqual({ v: before.v + 2, sub: null });
    expect((await admin('sign-out', 'nobody@example.com')).stderr).toMatch(/no user with email nobody@example.com/);
  });

  it('sets tenant settings, merges later changes, shows them, and the policy applies them', async () => {
    const first = JSON.parse(
      await ok(
        'settings',
        'set',
        '--tenant',
        tenantId,
        '--enable-providers',
        'github,slack',
        '--include-tools',
        'list_*,get_*',
        '--exclude-tools',
        '*_delete',
        '--connection-roles',
        'eng,ops',
      ),
    );
    expect(first).toEqual({
      enabledProviders: ['github', 'slack'],
      includeTools: ['list_*', 'get_*'],
      excludeTools: ['*_delete'],
      connectionRoles: ['eng', 'ops'],
    });
    // A second change touches only what it names.
    await ok('settings', 'set', '--tenant', tenantId, '--all-providers', '--allowed-tools', 'list_repos,get_*', '--any-role');
    const shown = JSON.parse(await ok('settings', 'show', '--tenant', tenantId));
    const expected = { allowedTools: ['list_repos', 'get_*'], includeTools: ['list_*', 'get_*'], excludeTools: ['*_delete'] };
    expect(shown).toEqual(expected);

    const settings = (await getTenant(pool, tenantId))!.settings;
    expect(settings).toEqual(expected);
    expect(isToolAllowed(settings, 'list_repos')).toBe(true);
    expect(isToolAllowed(settings, 'get_issue')).toBe(true);
    expect(isToolAllowed(settings, 'list_issues')).toBe(false); // not in allowedTools
    expect(isToolAllowed(settings, 'create_issue')).toBe(false);
    expect(isProviderEnabled(settings, 'atlassian-jira')).toBe(true);
    expect(hasConnectionRole(settings, ['member'])).toBe(true);
  });

  it('sets the approval settings, which the approval policy applies', async () => {
    const set = JSON.parse(
      await ok(
        'settings',
        'set',
        '--tenant',
        tenantId,
        '--approval-tools',
        'send_*,create_issue',
        '--approve-destructive',
        'no',
        '--approver-roles',
        'self,lead',
        '--approval-ttl-sec',
        '172800',
      ),
    );
    expect(set).toMatchObject({
      approvalTools: ['send_*', 'create_issue'],
      approveDestructive: false,
      approverRoles: ['self', 'lead'],
      approvalTtlSec: 172800,
    });
    const settings = (await getTenant(pool, tenantId))!.settings;
    expect(needsApproval(settings, githubTool('send_message', 'write'))).toBe(true);
    expect(needsApproval(settings, githubTool('merge_pull_request', 'destructive'))).toBe(false);
    // Clearing brings the defaults back: destructive tools need approval, by the caller or an administrator, for a day.
    await ok(
      'settings',
      'set',
      '--tenant',
      tenantId,
      '--no-approval-tools',
      '--default-approve-destructive',
      '--default-approvers',
      '--default-approval-ttl',
    );
    const cleared = (await getTenant(pool, tenantId))!.settings;
    expect(cleared).not.toHaveProperty('approvalTools');
    expect(cleared).not.toHaveProperty('approveDestructive');
    expect(needsApproval(cleared, githubTool('merge_pull_request', 'destructive'))).toBe(true);
  });

  it('sets per-tool overrides by qualified name, which the approval policy applies; a bad one is refused by name', async () => {
    const set = JSON.parse(
      await ok('settings', 'set', '--tenant', tenantId, '--tool-overrides', 'github_merge_*=never-ask, github_get_me=always-ask'),
    );
    expect(set.toolOverrides).toEqual([
      { pattern: 'github_merge_*', mode: 'never-ask' },
      { pattern: 'github_get_me', mode: 'always-ask' },
    ]);
    const settings = (await getTenant(pool, tenantId))!.settings;
    expect(needsApproval(settings, githubTool('merge_pull_request', 'destructive'))).toBe(false);
    expect(needsApproval(settings, githubTool('get_me', 'read'))).toBe(true);
    const refused: [string, RegExp][] = [
      ['github merge=never-ask', /--tool-overrides: "github merge=never-ask" is not valid \(pattern: expected a non-empty pattern/],
      [
        'github_*=sometimes',
        /--tool-overrides: "github_\*=sometimes" is not valid \(mode: expected one of never-ask, always-ask, read-only\)/,
      ],
      ['github_*', /--tool-overrides: "github_\*" is not valid \(expected pattern=mode/],
      [`${'x'.repeat(201)}=read-only`, /\(pattern: expected a pattern of at most 200 characters\)/],
      ['a_b=never-ask,A-B=read-only', /--tool-overrides: "A-B=read-only" is not valid \(pattern: this pattern is listed twice\)/],
      [
        Array.from({ length: 101 }, (_, i) => `t_${i}=never-ask`).join(','),
        /--tool-overrides: .* is not valid \(expected at most 100 tool overrides\)/,
      ],
    ];
    for (const [text, message] of refused) {
      const run = await admin('settings', 'set', '--tenant', tenantId, '--tool-overrides', text);
      expect(run, text).toMatchObject({ code: 2, stdout: '' });
      expect(run.stderr, text).toMatch(message);
    }
    // Nothing refused was stored; clearing removes them.
    expect((await getTenant(pool, tenantId))!.settings.toolOverrides).toEqual(set.toolOverrides);
    expect(JSON.parse(await ok('settings', 'set', '--tenant', tenantId, '--no-tool-overrides'))).not.toHaveProperty('toolOverrides');
  });

  it("knows the operator's upstream MCP servers: settings enable them, org accounts take their keys", async () => {
    const upstreamEnv = {
      ...env,
      UPSTREAM_MCP_SERVERS: JSON.stringify([
        'deepwiki',
        { name: 'acme-mcp', displayName: 'Acme', url: 'https://mcp.acme.example/mcp', auth: { type: 'apikey', header: 'X-Key' } },
      ]),
    };
    const run = (...args: string[]) => inProcess(args, upstreamEnv);
    const set = await run('settings', 'set', '--tenant', tenantId, '--enable-providers', 'github,deepwiki,acme-mcp');
    expect(set.code).toBe(0);
    expect(JSON.parse(set.stdout).enabledProviders).toEqual(['github', 'deepwiki', 'acme-mcp']);
    expect((await admin('settings', 'set', '--tenant', tenantId, '--enable-providers', 'deepwiki')).stderr).toMatch(
      /unknown provider "deepwiki"/,
    );
    expect((await run('org-account', 'create', '--tenant', tenantId, '--integration', 'deepwiki', '--label', 'x')).stderr).toMatch(
      /needs no account/,
    );
    const created = await run('org-account', 'create', '--tenant', tenantId, '--integration', 'acme-mcp', '--label', 'Acme org');
    expect(created).toMatchObject({ code: 0, stderr: '' });
    // Leave the tenant as the next test expects it.
    await pool.query(`DELETE FROM accounts WHERE id = $1`, [created.stdout.trim()]);
    await run('settings', 'set', '--tenant', tenantId, '--all-providers');
    const bad = await inProcess(['settings', 'show', '--tenant', tenantId], { ...env, UPSTREAM_MCP_SERVERS: '[{"name":"Bad"}]' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('UPSTREAM_MCP_SERVERS: [0].name');
  });

  it("knows the operator's OpenAPI integrations from OPENAPI_INTEGRATIONS, as the server does", async () => {
    const openapiEnv = {
      ...env,
      OPENAPI_INTEGRATIONS: JSON.stringify([
        {
          name: 'petstore',
          displayName: 'Petstore',
          document: '@octokit/openapi/generated/api.github.com.json',
          baseUrl: 'https://petstore.example',
          auth: { type: 'bearer' },
        },
        {
          name: 'weather',
          displayName: 'Weather',
          document: '@octokit/openapi/generated/api.github.com.json',
          baseUrl: 'https://weather.example',
        },
      ]),
    };
    const run = (...args: string[]) => inProcess(args, openapiEnv);
    const set = await run('settings', 'set', '--tenant', tenantId, '--enable-providers', 'github,petstore,weather');
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout).enabledProviders).toEqual(['github', 'petstore', 'weather']);
    // Without the variable the CLI does not know them (it reads what the server reads, nothing else).
    expect((await admin('settings', 'set', '--tenant', tenantId, '--enable-providers', 'petstore')).stderr).toMatch(
      /unknown provider "petstore"/,
    );
    expect((await run('org-account', 'create', '--tenant', tenantId, '--integration', 'weather', '--label', 'x')).stderr).toMatch(
      /needs no account/,
    );
    const created = await run('org-account', 'create', '--tenant', tenantId, '--integration', 'petstore', '--label', 'Pets org');
    expect(created).toMatchObject({ code: 0, stderr: '' });
    await pool.query(`DELETE FROM accounts WHERE id = $1`, [created.stdout.trim()]);
    await run('settings', 'set', '--tenant', tenantId, '--all-providers');
    const bad = await inProcess(['settings', 'show', '--tenant', tenantId], { ...env, OPENAPI_INTEGRATIONS: '[{"name":"Bad"}]' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('OPENAPI_INTEGRATIONS: [0].name');
  });

  it('creates, shares, lists and deletes organisation accounts, never with a secret', async () => {
    const [github, slack] = (
      await Promise.all([
        ok('org-account', 'create', '--tenant', tenantId, '--integration', 'github', '--label', 'Acme GitHub'),
        ok('org-account', 'create', '--tenant', tenantId, '--integration', 'slack', '--label', 'Acme Slack', '--share-with', '*'),
      ])
    ).map((out) => out.trim());
    expect(await findTenantAccount(pool, github)).toMatchObject({
      tenantId,
      scope: 'tenant',
      ownerUserId: null,
      integration: 'github',
      label: 'Acme GitHub',
      isDefault: true,
      sharingRoles: [],
      status: 'active',
      hasCredential: false,
    });

    const shared = JSON.parse(await ok('org-account', 'share', '--id', github, '--roles', 'eng,ops'));
    expect(shared).toMatchObject({ id: github, sharingRoles: ['eng', 'ops'] });
    const listed = JSON.parse(await ok('org-account', 'list', '--tenant', tenantId));
    expect(listed).toEqual([
      {
        id: github,
        integration: 'github',
        label: 'Acme GitHub',
        isDefault: true,
        sharingRoles: ['eng', 'ops'],
        status: 'active',
        hasCredential: false,
      },
      {
        id: slack,
        integration: 'slack',
        label: 'Acme Slack',
        isDefault: true,
        sharingRoles: ['*'],
        status: 'active',
        hasCredential: false,
      },
    ]);

    expect((await ok('org-account', 'delete', '--id', github)).trim()).toBe(`deleted ${github}`);
    expect((await listTenantAccounts(pool, tenantId)).map((a) => a.id)).toEqual([slack]);
  });

  it('answers a bad or missing argument with one line on stderr and exit code 2', async () => {
    const cases: [string[], RegExp][] = [
      [['frobnicate'], /unknown command "frobnicate"/],
      [['create-tenant', '--nmae', 'x'], /unknown option --nmae/],
      [['create-tenant'], /missing --name/],
      [['settings'], /settings needs a subcommand/],
      [['settings', 'set', '--tenant', tenantId, '--enable-providers', 'github,gitlab'], /unknown provider "gitlab"/],
      [['settings', 'set', '--tenant', tenantId, '--include-tools', 'list.repos'], /--include-tools: "list\.repos" is not valid/],
      [['settings', 'set', '--tenant', tenantId, '--all-providers', '--enable-providers', 'github'], /cannot be used together/],
      [['settings', 'set', '--tenant', tenantId], /needs at least one setting option/],
      [['settings', 'set', '--tenant', tenantId, '--approve-destructive', 'maybe'], /--approve-destructive: "maybe" is not valid/],
      [
        ['settings', 'set', '--tenant', tenantId, '--approval-ttl-sec', '2592001'],
        /--approval-ttl-sec: "2592001" is not valid \(expected at most 30 days/,
      ],
      [['settings', 'set', '--tenant', tenantId, '--approval-ttl-sec', '1h'], /--approval-ttl-sec: "1h" is not valid/],
      [['settings', 'set', '--tenant', tenantId, '--approver-roles', 'lead!'], /--approver-roles: "lead!" is not valid/],
      [['settings', 'show', '--tenant', 'ten_nope'], /unknown tenant ten_nope/],
      [['set-roles', '--email', 'nobody@example.com', '--role', 'eng'], /no user with email nobody@example.com/],
      [['set-roles', '--email', 'ada@example.com'], /missing --role/],
      [['org-account', 'create', '--tenant', tenantId, '--integration', 'gitlab', '--label', 'x'], /unknown integration "gitlab"/],
      [['org-account', 'share', '--id', 'acc_nope', '--roles', 'eng'], /unknown organisation account acc_nope/],
      [
        ['org-account', 'create', '--tenant', tenantId, '--integration', 'github', '--label', 'x'.repeat(101)],
        /--label: .* is not valid \(The label must be at most 100 characters\.\)/,
      ],
    ];
    const runs = await Promise.all(cases.map(([args]) => admin(...args)));
    runs.forEach((run, i) => {
      const [args, message] = cases[i]!;
      expect({ args, ...run }).toMatchObject({ args, code: 2, stdout: '' });
      expect(run.stderr).toMatch(/^admin: [^\n]+ \(see --help\)\n$/);
      expect(run.stderr).toMatch(message);
    });
    // Anything else is exit code 1, still one line and no stack trace.
    const duplicate = await admin('create-user', '--tenant', tenantId, '--email', 'ADA@example.com');
    expect(duplicate).toMatchObject({ code: 1, stderr: 'admin: a user with email ADA@example.com already exists\n' });
  });

  it('answers --help for every command and subcommand', async () => {
    const top = await admin('--help');
    expect(top.code).toBe(0);
    const commands = [
      'create-tenant',
      'list-tenants',
      'create-user',
      'list-users',
      'set-roles',
      'login-link',
      'sign-out',
      'unbind-sign-in',
      'create-key',
      'list-keys',
      'revoke-key',
      'reseal',
      'settings',
      'settings show',
      'settings set',
      'org-account',
      'org-account create',
      'org-account share',
      'org-account list',
      'org-account delete',
      'upstream',
      'upstream add',
      'upstream list',
      'upstream remove',
    ];
    for (const command of commands.filter((c) => c !== 'settings' && c !== 'org-account' && c !== 'upstream'))
      expect(top.stdout).toContain(`  ${command} `);
    const runs = await Promise.all(commands.map((command) => admin(...command.split(' '), '--help')));
    runs.forEach((run, i) => {
      expect({ command: commands[i], code: run.code, stderr: run.stderr }).toEqual({ command: commands[i], code: 0, stderr: '' });
      expect(run.stdout).toMatch(new RegExp(`^Usage: npm run admin -- ${commands[i]}\\b`));
    });
    expect(runs[commands.indexOf('settings set')]!.stdout).toContain('--exclude-tools');
  });

  it('answers a bad configuration with exit code 2 instead of exiting', async () => {
    const run = await inProcess(['list-tenants'], { ...env, ENCRYPTION_KEYS: undefined, ENCRYPTION_ACTIVE_KEY_ID: 'k9' });
    expect(run).toMatchObject({ code: 2, stdout: '' });
    expect(run.stderr).toMatch(/^Invalid configuration:\n {2}ENCRYPTION_KEYS: required when ENCRYPTION_ACTIVE_KEY_ID is set\n/);
  });

  it('runs as its own process: a command that succeeds, and a usage error', async () => {
    const [created, unknown] = await Promise.all([spawned('create-tenant', '--name', 'Spawned'), spawned('frobnicate')]);
    expect(created).toMatchObject({ code: 0, stderr: '' });
    const tenant = JSON.parse(created.stdout);
    expect(await getTenant(pool, tenant.id)).toMatchObject({ id: tenant.id, name: 'Spawned' });
    expect(unknown).toEqual({ code: 2, stdout: '', stderr: 'admin: unknown command "frobnicate" (see --help)\n' });
  });
});
