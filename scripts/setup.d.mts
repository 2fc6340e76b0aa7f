// Types for what TypeScript code imports from setup.mjs (plain JavaScript: it runs before node_modules exists).
export const ROOT: string;
export const CACHE_DIR: string;
export const TEMPORAL_SERVER_VERSION: string;
export const NODE_LTS_VERSION: string;
export function temporalServerBinDir(): string;
export function nodeSupport(version: string): { supported: boolean; message: string };
