import type { Logger } from 'pino';
import type { Browser } from 'playwright-core';
import type { EgressPolicy } from '../egress/egress-policy.js';
import { type EgressProxy, type EgressProxyOptions, startEgressProxy } from '../egress/egress-proxy.js';
import { type ChromiumSettings, launchChromium } from './chromium.js';

/** A started chromium and the egress proxy its launch names. */
export interface RunningChromium {
  browser: Browser;
  proxy: EgressProxy;
  /** Whether chromium's sandbox is on (see launchChromium). */
  sandboxed: boolean;
}

interface SharedChromiumOptions {
  settings: ChromiumSettings;
  /** The launch-wide proxy's policy: what a context that names no proxy of its own may reach. */
  policy: EgressPolicy;
  /** The launch-wide proxy's size limits. */
  limits: EgressProxyOptions;
  /** Flags of this use (see launchChromium). */
  extraArgs?: readonly string[];
  logger: Pick<Logger, 'debug' | 'info' | 'warn'>;
  /** Called once per start, after chromium is up. */
  onStarted?(running: RunningChromium): void;
}

/**
 * One chromium and its egress proxy, started on first use and shared by every use after (each
 * use opens its own browser context). When chromium goes away (a crash, an OOM kill) its proxy
 * closes with it and the next use starts both again. A process that never asks starts nothing.
 */
export class SharedChromium {
  private running?: Promise<RunningChromium>;

  constructor(private readonly options: SharedChromiumOptions) {}

  /** The running chromium, started now when there is none. */
  get(): Promise<RunningChromium> {
    if (this.running) return this.running;
    const starting = this.start();
    this.running = starting;
    starting.then(
      ({ browser, proxy }) =>
        browser.once('disconnected', () => {
          if (this.running === starting) this.running = undefined;
          void proxy.close();
        }),
      () => {
        if (this.running === starting) this.running = undefined;
      },
    );
    return starting;
  }

  /** Stops chromium and its proxy; the next `get` starts them again. */
  async close(): Promise<void> {
    const closing = this.running;
    this.running = undefined;
    const running = await closing?.catch(() => undefined);
    await running?.browser.close().catch(() => {});
    await running?.proxy.close();
  }

  private async start(): Promise<RunningChromium> {
    const { settings, policy, limits, extraArgs, logger } = this.options;
    const proxy = await startEgressProxy(policy, limits, logger);
    try {
      const { browser, sandboxed } = await launchChromium({ ...settings, proxyUrl: proxy.url, extraArgs, logger });
      const running = { browser, proxy, sandboxed };
      this.options.onStarted?.(running);
      return running;
    } catch (err) {
      await proxy.close();
      throw err;
    }
  }
}
