// Tenant settings: enabled providers, tool filters, connection roles, approvals.
import {
  type TenantSettings,
  TOOL_OVERRIDE_MODES,
  TOOL_OVERRIDES_MAX,
  type ToolOverride,
  tenantSettingsSchema,
} from '../../core/policy.js';
import { changeTenantSettings } from '../../features/accounts/store/tenants.js';
import { builtinProviders } from '../../providers/builtin/index.js';
import { type Context, type Group, list, need, oneOf, tenantCommand, UsageError, type Values } from './cli.js';
import { knownIntegrationsOf } from './known-providers.js';

/**
 * Each list setting, the option that sets it and the flag that removes it; `item` reads one of the
 * option's comma-separated items (default: the text as it is), `shown` writes one back for an error.
 */
const LIST_SETTINGS: {
  key: keyof TenantSettings;
  set: string;
  clear: string;
  item?: (text: string) => unknown;
  shown?: (value: unknown) => string;
}[] = [
  { key: 'enabledProviders', set: 'enable-providers', clear: 'all-providers' },
  { key: 'allowedTools', set: 'allowed-tools', clear: 'no-allowed-tools' },
  { key: 'includeTools', set: 'include-tools', clear: 'no-include-tools' },
  { key: 'excludeTools', set: 'exclude-tools', clear: 'no-exclude-tools' },
  { key: 'connectionRoles', set: 'connection-roles', clear: 'any-role' },
  { key: 'approvalTools', set: 'approval-tools', clear: 'no-approval-tools' },
  { key: 'approverRoles', set: 'approver-roles', clear: 'default-approvers' },
  { key: 'orgApproverRoles', set: 'org-approver-roles', clear: 'default-org-approvers' },
  {
    key: 'toolOverrides',
    set: 'tool-overrides',
    clear: 'no-tool-overrides',
    item(text) {
      const at = text.lastIndexOf('=');
      if (at < 0) {
        throw new UsageError(
          `--tool-overrides: "${text}" is not valid (expected pattern=mode, mode one of ${TOOL_OVERRIDE_MODES.join(', ')})`,
        );
      }
      return { pattern: text.slice(0, at).trim(), mode: text.slice(at + 1).trim() };
    },
    shown: (value) => {
      const { pattern, mode } = (value ?? {}) as Partial<ToolOverride>;
      return `${pattern}=${mode}`;
    },
  },
];

/** Each scalar setting: the option that sets it (parsed from its text) and the flag that removes it. */
const SCALAR_SETTINGS: { key: keyof TenantSettings; set: string; clear: string; parse(text: string): unknown }[] = [
  {
    key: 'approveDestructive',
    set: 'approve-destructive',
    clear: 'default-approve-destructive',
    parse(text) {
      if (text === 'yes' || text === 'true') return true;
      if (text === 'no' || text === 'false') return false;
      throw new UsageError(`--approve-destructive: "${text}" is not valid (expected yes or no)`);
    },
  },
  {
    key: 'approvalTtlSec',
    set: 'approval-ttl-sec',
    clear: 'default-approval-ttl',
    parse(text) {
      if (!/^\d+$/.test(text)) throw new UsageError(`--approval-ttl-sec: "${text}" is not valid (expected whole seconds)`);
      return Number(text);
    },
  },
];

/** Applies the options to the stored settings: a set option replaces its list, a clear flag removes it. */
function merge(current: TenantSettings, values: Values): TenantSettings {
  const next: Record<string, unknown> = { ...current };
  let changed = false;
  for (const { key, set, clear, item } of LIST_SETTINGS) {
    oneOf(values, set, clear);
    if (values[set] !== undefined) next[key] = item ? list(values, set).map(item) : list(values, set);
    else if (values[clear]) delete next[key];
    else continue;
    changed = true;
  }
  for (const { key, set, clear, parse } of SCALAR_SETTINGS) {
    oneOf(values, set, clear);
    if (values[set] !== undefined) next[key] = parse(need(values, set));
    else if (values[clear]) delete next[key];
    else continue;
    changed = true;
  }
  if (!changed) throw new UsageError('settings set needs at least one setting option');
  return next as TenantSettings;
}

/** Every name must be the deployment's integration or one of the tenant's own upstream servers. */
async function checkProviders(names: readonly string[] | undefined, ctx: Context, tenantId: string): Promise<void> {
  const known = (await knownIntegrationsOf(ctx.config, ctx.db, tenantId, names)).map((p) => p.name);
  const unknown = names?.find((n) => !known.includes(n));
  if (unknown) throw new UsageError(`unknown provider "${unknown}" (known: ${known.join(', ')})`);
}

/** The whole object through the schema; a bad item the options brought is a usage error naming the option. */
function validate(settings: TenantSettings, values: Values, tenantId: string): TenantSettings {
  const result = tenantSettingsSchema.safeParse(settings);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const [key, index, ...within] = issue.path;
  const setting = [...LIST_SETTINGS, ...SCALAR_SETTINGS].find((s) => s.key === key);
  const option = setting?.set;
  const shown = (setting && 'shown' in setting && setting.shown) || String;
  const value = settings[key as keyof TenantSettings];
  const item =
    typeof index === 'number' && Array.isArray(value)
      ? shown(value[index] ?? '')
      : Array.isArray(value)
        ? value.map(shown).join(',')
        : String(value);
  // A part of an item (an override's pattern or mode) is named with the reason.
  const reason = within.length ? `${within.join('.')}: ${issue.message}` : issue.message;
  if (option && values[option] !== undefined) throw new UsageError(`--${option}: "${item}" is not valid (${reason})`);
  throw new Error(`the stored settings of tenant ${tenantId} are not valid: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
}

const options = Object.fromEntries(
  [...LIST_SETTINGS, ...SCALAR_SETTINGS].flatMap(({ set, clear }) => [
    [set, { type: 'string' as const }],
    [clear, { type: 'boolean' as const }],
  ]),
);

export const settingsGroup: Group = {
  name: 'settings',
  summary: "Show or change a tenant's settings (providers, tool filters, connection roles, approvals)",
  commands: [
    tenantCommand({ name: 'show', summary: "Print a tenant's settings as JSON" }, async (_, tenant) => tenant.settings),
    {
      name: 'set',
      synopsis: [
        '--tenant <id>',
        '[--enable-providers github,slack | --all-providers]',
        '[--allowed-tools a,b | --no-allowed-tools]',
        "[--include-tools 'list_*,get_*' | --no-include-tools]",
        "[--exclude-tools '*_delete' | --no-exclude-tools]",
        '[--connection-roles eng,ops | --any-role]',
        "[--approval-tools 'merge_*,send_message' | --no-approval-tools]",
        '[--approve-destructive yes|no | --default-approve-destructive]',
        '[--approver-roles self,admin,lead | --default-approvers]',
        '[--org-approver-roles admin | --default-org-approvers]',
        '[--approval-ttl-sec 86400 | --default-approval-ttl]',
        "[--tool-overrides 'notion_api_post_search=read-only,playwright_browser_*=read-only' | --no-tool-overrides]",
      ].join('\n    '),
      summary: "Change a tenant's settings; prints the result",
      details: [
        'Each option replaces one setting and leaves the others as they are:',
        `  --enable-providers   only these providers (known: ${builtinProviders.map((p) => p.manifest.name).join(', ')});`,
        '                       --all-providers enables every provider',
        '  --allowed-tools      only these tool names or patterns; --no-allowed-tools lifts the list',
        '  --include-tools      a tool must match one of these patterns; --no-include-tools removes them',
        '  --exclude-tools      a tool matching one of these patterns is hidden and refused; --no-exclude-tools removes them',
        '  --connection-roles   only users with one of these roles may use connections; --any-role lets everyone',
        '  --approval-tools     a call of a tool matching one of these patterns waits for a person to approve it',
        '  --approve-destructive  yes (the default): every destructive tool waits for approval; no: only --approval-tools do',
        '  --approver-roles     who may approve: these roles, and self for the caller themself (default: self,admin)',
        '  --org-approver-roles who may approve calls on organisation accounts (default: --approver-roles); without self,',
        '                       a caller never approves their own call on one',
        '  --approval-ttl-sec   how long an approval waits for a decision (default 86400, at most 2592000 = 30 days)',
        '  --tool-overrides     pattern=mode items, by qualified tool name (notion_api_post_search, playwright_browser_*):',
        '                       never-ask (no approval), always-ask (approval for every call), read-only (the tool counts',
        '                       as reading: no approval for being destructive); the most specific matching pattern decides',
        `                       (at most ${TOOL_OVERRIDES_MAX}); --no-tool-overrides removes them (docs/guides/approvals.md)`,
        'Tool names are unqualified (list_repos, not github_list_repos), except in --tool-overrides.',
        'Patterns use letters, digits, _, - and *, where * matches any run of characters. Quote them in the shell.',
      ].join('\n'),
      options: { tenant: { type: 'string' }, ...options },
      async run(values, _, ctx) {
        const tenantId = need(values, 'tenant');
        // Arguments first, so a malformed one is reported without touching the database (a provider
        // the deployment lacks is looked up among the tenant's own servers).
        const patch = merge({}, values);
        await checkProviders(patch.enabledProviders, ctx, tenantId);
        validate(patch, values, tenantId);
        const updated = await changeTenantSettings(await ctx.db(), tenantId, (current) =>
          validate(merge(current, values), values, tenantId),
        );
        if (!updated) throw new UsageError(`unknown tenant ${tenantId}`);
        ctx.out(updated.settings);
      },
    },
  ],
};
