import type { History } from '@temporalio/common/lib/proto-utils.js';
import { Worker, type WorkflowBundleOption } from '@temporalio/worker';
import type { Keyring } from '../../platform/database/keyring.js';
import { KeyringPayloadCodec } from '../../platform/temporal/payload-codec.js';
import { FAILURE_CONVERTER_PATH, WORKFLOW_BUNDLE_OPTIONS, WORKFLOWS_PATH } from '../../surfaces/temporal-plugin/index.js';

export interface ReplayVerdict {
  workflowId: string;
  ok: boolean;
  error?: string;
}

/**
 * Replays recorded histories against the current workflow code. A change that breaks
 * determinism fails here (a DeterminismViolationError), before it breaks a running workflow.
 */
export async function replayHistories(
  histories: { workflowId: string; history: History }[],
  options: { keyring: Keyring; workflowBundle?: WorkflowBundleOption },
): Promise<ReplayVerdict[]> {
  const verdicts: ReplayVerdict[] = [];
  const results = Worker.runReplayHistories(
    {
      ...(options.workflowBundle
        ? { workflowBundle: options.workflowBundle }
        : { workflowsPath: WORKFLOWS_PATH, bundlerOptions: { preloadModules: [...WORKFLOW_BUNDLE_OPTIONS.preloadModules] } }),
      dataConverter: { payloadCodecs: [new KeyringPayloadCodec(options.keyring)], failureConverterPath: FAILURE_CONVERTER_PATH },
      replayName: 'switchboard-replay',
    },
    histories,
  );
  for await (const result of results) {
    verdicts.push({
      workflowId: result.workflowId,
      ok: !result.error,
      error: result.error ? `${result.error.name}: ${result.error.message}` : undefined,
    });
  }
  return verdicts;
}
