import { readdirSync, readFileSync } from 'node:fs';
import { defaultPayloadConverter } from '@temporalio/common';
import { describe, expect, inject, it } from 'vitest';
import { replayHistories } from '../../bin/support/replay.js';
import { Keyring } from '../../platform/database/keyring.js';
import { KeyringPayloadCodec } from '../../platform/temporal/payload-codec.js';
import { FIXTURE_KEY, FIXTURE_KEY_ID } from '../support/fixture-key.js';
import { historyFromFixture } from '../support/history-text.js';

// A rolling deploy: a server of this version starts an MCP task's batch with `cancellable: true`,
// and a worker of the version before it (which knew no such flag) runs its first workflow task with
// local activities. Any worker of this version must replay that history as it was recorded.

const FIXTURES = new URL('../fixtures/histories/', import.meta.url).pathname;
const keyring = new Keyring(new Map([[FIXTURE_KEY_ID, Buffer.from(FIXTURE_KEY, 'base64')]]));
const codec = new KeyringPayloadCodec(keyring);

describe('tool batch replay', () => {
  it('a batch marked cancellable but recorded with local activities (by the worker version before the flag) replays', async () => {
    const fixture = historyFromFixture(readFileSync(`${FIXTURES}tool-batch-6.json`, 'utf8'));
    const started = fixture.history.events![0].workflowExecutionStartedEventAttributes!;
    const [sealed] = started.input!.payloads!;
    const input = defaultPayloadConverter.fromPayload<Record<string, unknown>>((await codec.decode([sealed]))[0]);
    expect(input.cancellable).toBeUndefined();
    // The history's own calls were local activities (markers), as that worker ran them.
    expect(fixture.history.events!.some((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity')).toBe(true);
    started.input!.payloads = await codec.encode([defaultPayloadConverter.toPayload({ ...input, cancellable: true })]);

    const verdicts = await replayHistories([fixture], {
      keyring,
      workflowBundle: { codePath: inject('workflowBundlePath') },
    });
    expect(verdicts).toEqual([{ workflowId: fixture.workflowId, ok: true }]);
  });

  it('every recorded tool batch still replays, the cancelled task batch (normal activities) among them', async () => {
    const files = readdirSync(FIXTURES).filter((f) => f.startsWith('tool-batch-'));
    expect(files).toContain('tool-batch-cancelled.json');
    const histories = files.map((f) => ({ ...historyFromFixture(readFileSync(`${FIXTURES}${f}`, 'utf8')), workflowId: f }));
    const verdicts = await replayHistories(histories, { keyring, workflowBundle: { codePath: inject('workflowBundlePath') } });
    expect(verdicts).toEqual(files.map((f) => ({ workflowId: f, ok: true })));
  });
});
