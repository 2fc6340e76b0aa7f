// The library entry: build Switchboard in code.
export { type Config, ConfigError, loadConfig } from './core/config.js';
export { MetaToolError } from './core/errors.js';
export * from './core/policy.js';
export { type AgentTool, CONNECTION_TOOL_NAMES, createSwitchboard, type Switchboard, type SwitchboardOptions } from './library.js';
export { SwitchboardPlugin, type SwitchboardPluginOptions, WORKFLOW_BUNDLE_OPTIONS, WORKFLOWS_PATH } from './plugin/index.js';
export { builtinProviders } from './providers/index.js';
export { ProviderRegistry } from './providers/registry.js';
export * from './providers/sdk.js';
export { createApp } from './server/app.js';
export type { ServiceContext } from './server/context.js';
export { Keyring } from './store/keyring.js';
