import type { Logger } from 'pino';
import type { Config } from '../../core/config.js';
import { chromiumSettings } from '../../platform/browser/chromium.js';
import { ChromiumBrowserEngine } from '../../platform/browser/engine.js';
import { createJotsStore } from '../../platform/database/jots.js';
import type { Queryable } from '../../platform/database/queryable.js';
import type { ToolServices } from '../../providers/sdk/index.js';

/** What the built-in providers get from the worker, and how to stop it. */
export interface BuiltinServices extends ToolServices {
  close(): Promise<void>;
}

/**
 * Notes on the process's pool, and a browser launched on first use (one chromium per process,
 * closed by `close`). Cheap to create: a process that never opens a page never starts chromium.
 */
export function createBuiltinServices(deps: { pool: Queryable; config: Config; logger: Logger }): BuiltinServices {
  const { config } = deps;
  const browser = new ChromiumBrowserEngine({
    ...chromiumSettings(config),
    allowedHosts: config.BROWSER_ALLOWED_HOSTS,
    pageTimeoutMs: config.BROWSER_PAGE_TIMEOUT_MS,
    maxPageBytes: config.BROWSER_MAX_PAGE_BYTES,
    maxResultBytes: config.CONNECTIONS_TOOL_RESULT_MAX_BYTES,
    concurrency: config.BROWSER_CONCURRENCY,
    logger: deps.logger.child({ component: 'browser' }),
  });
  return {
    jots: createJotsStore(deps.pool, { maxNotes: config.JOTS_MAX_NOTES_PER_USER, maxBytes: config.JOTS_MAX_BYTES_PER_USER }),
    browser,
    close: () => browser.close(),
  };
}
