import { fileURLToPath } from 'node:url';
import type { DataConverter } from '@temporalio/common';
import { SimplePlugin } from '@temporalio/plugin';
import type { BundleOptions, WorkerOptions, WorkflowBundleOption } from '@temporalio/worker';
import { loadConfig } from '../../core/config.js';
import { type ActivityDeps, createActivities } from '../../features/activities.js';
import { Keyring } from '../../platform/database/keyring.js';
import { KeyringPayloadCodec } from '../../platform/temporal/payload-codec.js';

/** The file the worker bundles: every Switchboard workflow, and nothing with I/O. */
export const WORKFLOWS_PATH = fileURLToPath(new URL('../../features/workflows.ts', import.meta.url));
/**
 * How Switchboard's workflows are bundled (the worker's own bundling, `bundleWorkflowCode`, replay):
 * with `reuseV8Context` (the SDK's default) a module is evaluated again for every new workflow
 * unless it is preloaded, once, into the shared context. Switchboard's workflow modules and what
 * they import keep no state of their own at module level (the workflow's state is the SDK's, per
 * workflow), so they are preloaded: a new batch no longer evaluates its module graph (bench/README.md,
 * "Switchboard's own cost per call"). A module that keeps per-workflow state at module level must
 * not be imported by features/workflows.ts.
 */
export const WORKFLOW_BUNDLE_OPTIONS = { preloadModules: [WORKFLOWS_PATH] } as const satisfies Partial<BundleOptions>;

/** Loaded by path in the worker, the client and the workflow sandbox alike. */
export const FAILURE_CONVERTER_PATH = fileURLToPath(new URL('../../platform/temporal/failure-converter.ts', import.meta.url));

export interface SwitchboardPluginOptions {
  /** Encrypts every payload (and failure message) with this keyring. Client and worker need the same keys. */
  keyring?: Keyring;
  /** Worker side: what the activities need. Omit for a client-only plugin. */
  activityDeps?: ActivityDeps;
  /** A prebuilt bundle (`bundleWorkflowCode` of WORKFLOWS_PATH with WORKFLOW_BUNDLE_OPTIONS), reused across workers to skip re-bundling. */
  workflowBundle?: WorkflowBundleOption;
}

/**
 * Adds Switchboard's activities, workflows and data converter to a Worker and Client.
 * Its workflows replace a worker's own `workflowsPath`, so run it on Switchboard's task queue
 * and reach its workflows from yours as child workflows (see `switchboard/workflow`).
 */
export class SwitchboardPlugin extends SimplePlugin {
  /**
   * The plugin for a worker or client of your own that talks to Switchboard's workflows and
   * activities (e.g. an agent workflow using `switchboard/workflow`): it needs Switchboard's
   * payload codec, built here from SWITCHBOARD_PAYLOAD_KEYS (the payload keys alone, from
   * `npm run admin -- payload-keys`: what an agent's worker should hold) or else from
   * ENCRYPTION_KEYS / ENCRYPTION_ACTIVE_KEY_ID.
   */
  static fromEnv(env: Record<string, string | undefined> = process.env): SwitchboardPlugin {
    if (env.SWITCHBOARD_PAYLOAD_KEYS) return new SwitchboardPlugin({ keyring: payloadOnlyKeyring(env.SWITCHBOARD_PAYLOAD_KEYS) });
    const config = loadConfig({ ENCRYPTION_KEYS: env.ENCRYPTION_KEYS, ENCRYPTION_ACTIVE_KEY_ID: env.ENCRYPTION_ACTIVE_KEY_ID });
    if (!config.ENCRYPTION_KEYS) throw new Error("ENCRYPTION_KEYS is not set: Switchboard's payloads cannot be read without it");
    return new SwitchboardPlugin({ keyring: new Keyring(config.ENCRYPTION_KEYS, config.ENCRYPTION_ACTIVE_KEY_ID) });
  }

  constructor(options: SwitchboardPluginOptions = {}) {
    // Switchboard's own worker (the one with its activities) runs only what was sealed with the
    // payload key: plain input from anyone who merely reaches Temporal fails, and runs nothing.
    // A client-only plugin (an agent's worker) passes its own plain payloads through.
    const codec = options.keyring && new KeyringPayloadCodec(options.keyring, { refuseUnsealed: Boolean(options.activityDeps) });
    super({
      name: 'switchboard',
      ...(codec && {
        // Appends to the user's codecs instead of replacing them.
        dataConverter: (existing?: DataConverter): DataConverter => ({
          ...existing,
          payloadCodecs: [...(existing?.payloadCodecs ?? []), codec],
          failureConverterPath: FAILURE_CONVERTER_PATH,
        }),
      }),
      ...(options.activityDeps && {
        activities: createActivities(options.activityDeps),
        ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : { workflowsPath: WORKFLOWS_PATH }),
      }),
    });
  }

  /** The worker bundles Switchboard's workflows with WORKFLOW_BUNDLE_OPTIONS (a prebuilt bundle was built with them). */
  override configureWorker(options: WorkerOptions): WorkerOptions {
    const configured = super.configureWorker(options);
    if (configured.workflowBundle || configured.workflowsPath !== WORKFLOWS_PATH) return configured;
    const preload = configured.bundlerOptions?.preloadModules ?? [];
    return {
      ...configured,
      bundlerOptions: { ...configured.bundlerOptions, preloadModules: [...preload, ...WORKFLOW_BUNDLE_OPTIONS.preloadModules] },
    };
  }
}

/** SWITCHBOARD_PAYLOAD_KEYS has ENCRYPTION_KEYS' format (`id:base64,…`, active first), so the same schema reads it. */
function payloadOnlyKeyring(value: string): Keyring {
  try {
    const { ENCRYPTION_KEYS: keys } = loadConfig({ ENCRYPTION_KEYS: value });
    return Keyring.payloadOnly(keys!);
  } catch (err) {
    throw new Error(`SWITCHBOARD_PAYLOAD_KEYS: ${(err as Error).message.replaceAll('ENCRYPTION_KEYS', 'the value')}`);
  }
}
