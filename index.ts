// The library entry: build Switchboard in code.
export { type Config, ConfigError, loadConfig } from './core/config.js';
export { MetaToolError } from './core/errors.js';
export * from './core/policy.js';
export type { ServiceContext } from './features/context.js';
export { type AgentTool, CONNECTION_TOOL_NAMES, createSwitchboard, type Switchboard, type SwitchboardOptions } from './library.js';
export { Keyring } from './platform/database/keyring.js';
export { builtinProviders } from './providers/builtin/index.js';
export { ProviderRegistry } from './providers/registry.js';
export * from './providers/sdk/index.js';
export { createApp } from './surfaces/http/app.js';
export {
  SwitchboardPlugin,
  type SwitchboardPluginOptions,
  WORKFLOW_BUNDLE_OPTIONS,
  WORKFLOWS_PATH,
} from './surfaces/temporal-plugin/index.js';
