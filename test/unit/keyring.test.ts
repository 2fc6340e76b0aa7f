import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Keyring, KeyringError } from '../../platform/database/keyring.js';
import { KeyringPayloadCodec, UNSEALED_MESSAGE } from '../../platform/temporal/payload-codec.js';
import { SwitchboardPlugin } from '../../surfaces/temporal-plugin/index.js';
import { sealBeforeKeySplit } from '../support/legacy-seal.js';

const k1 = randomBytes(32);
const k2 = randomBytes(32);

describe('keyring (AES-256-GCM)', () => {
  it('round-trips and never contains the plaintext', () => {
    const ring = new Keyring(new Map([['k1', k1]]));
    const sealed = ring.encrypt('gho_secret-token', 'account:t:a:credential');
    expect(sealed).not.toContain('gho_secret-token');
    expect(sealed.startsWith('v2.k1.')).toBe(true);
    expect(ring.decrypt(sealed, 'account:t:a:credential')).toBe('gho_secret-token');
  });

  it('rotates: the old key still decrypts, new writes use the active key', () => {
    const old = new Keyring(new Map([['k1', k1]]));
    const sealedOld = old.encrypt('before rotation', 'aad');
    const rotated = new Keyring(
      new Map([
        ['k1', k1],
        ['k2', k2],
      ]),
      'k2',
    );
    expect(rotated.decrypt(sealedOld, 'aad')).toBe('before rotation');
    const sealedNew = rotated.encrypt('after rotation', 'aad');
    expect(Keyring.keyIdOf(sealedNew)).toBe('k2');
    expect(() => old.decrypt(sealedNew, 'aad')).toThrow(/no key "k2"/);
  });

  it("rejects a tampered ciphertext, a truncated tag and another row's AAD", () => {
    const ring = new Keyring(new Map([['k1', k1]]));
    const sealed = ring.encrypt('value', 'row-1');
    const parts = sealed.split('.');
    const body = Buffer.from(parts[3], 'base64url');
    body[0] ^= 1;
    const tampered = [...parts.slice(0, 3), body.toString('base64url'), parts[4]].join('.');
    expect(() => ring.decrypt(tampered, 'row-1')).toThrow(KeyringError);
    const shortTag = [...parts.slice(0, 4), Buffer.from(parts[4], 'base64url').subarray(0, 8).toString('base64url')].join('.');
    expect(() => ring.decrypt(shortTag, 'row-1')).toThrow(/truncated/);
    expect(() => ring.decrypt(sealed, 'row-2')).toThrow(/failed authentication/);
    expect(() => ring.decrypt('garbage', 'row-1')).toThrow(/not a sealed value/);
  });

  it('refuses an active key id that is not in the ring', () => {
    expect(() => new Keyring(new Map([['k1', k1]]), 'nope')).toThrow(/not in the keyring/);
  });

  it('finding 6: a credential sealed with the raw key before the split still decrypts, and is marked for re-sealing', () => {
    const ring = new Keyring(new Map([['k1', k1]]));
    const old = sealBeforeKeySplit(k1, 'k1', 'gho_old-row', 'account:t:a:credential');
    expect(ring.decrypt(old, 'account:t:a:credential')).toBe('gho_old-row');
    expect(Keyring.isLegacy(old)).toBe(true);
    expect(Keyring.isLegacy(ring.encrypt('new', 'aad'))).toBe(false);
  });

  it('finding 6: payloads and credentials use different keys derived from one entry; neither opens as the other', () => {
    const ring = new Keyring(new Map([['k1', k1]]));
    const aad = 'account:t:a:credential';
    // A payload-key ciphertext dressed as a credential row (same AAD, same format) does not open.
    const payload = ring.encryptBytes(Buffer.from('gho_token'), aad).data;
    const asRow = ['v2', 'k1', payload.subarray(0, 12), payload.subarray(12, payload.length - 16), payload.subarray(payload.length - 16)]
      .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
      .join('.');
    expect(() => ring.decrypt(asRow, aad)).toThrow(/failed authentication/);
    // A credential row's ciphertext presented as a payload does not open either.
    const [, , iv, body, tag] = ring.encrypt('gho_token', aad).split('.');
    const asPayload = Buffer.concat([iv, body, tag].map((p) => Buffer.from(p, 'base64url')));
    expect(() => ring.decryptBytes('k1', asPayload, aad)).toThrow(/failed authentication/);
    expect(() => ring.decryptBytes('k1', asPayload, aad, 'legacy')).toThrow(/failed authentication/);
    // Neither derived key is the raw entry.
    expect(() => ring.decryptBytes('k1', payload, aad, 'legacy')).toThrow(/failed authentication/);
    expect(ring.decryptBytes('k1', payload, aad).toString()).toBe('gho_token');
  });

  it('stored results have their own key: a payload key (all an agent worker holds) never opens one, nor the other way round', () => {
    const ring = new Keyring(new Map([['k1', k1]]));
    const aad = 'stored_results:res_a:t:u';
    const sealed = ring.encryptBytes(Buffer.from('{"body":"secret"}'), aad, 'result');
    expect(ring.decryptBytes('k1', sealed.data, aad, 'result').toString()).toBe('{"body":"secret"}');
    expect(() => ring.decryptBytes('k1', sealed.data, aad)).toThrow(/failed authentication/);
    expect(() => ring.decryptBytes('k1', sealed.data, 'stored_results:res_a:t:other-user', 'result')).toThrow(/failed authentication/);
    const payload = ring.encryptBytes(Buffer.from('x'), aad).data;
    expect(() => ring.decryptBytes('k1', payload, aad, 'result')).toThrow(/failed authentication/);
    const agentRing = Keyring.payloadOnly(new Map([['k1', Buffer.from(ring.exportPayloadKeys().split(':')[1], 'base64')]]));
    expect(() => agentRing.decryptBytes('k1', sealed.data, aad, 'result')).toThrow(/no key "k1"/);
  });

  it('finding 6: rotation keeps working with derived keys', () => {
    const rotated = new Keyring(
      new Map([
        ['k1', k1],
        ['k2', k2],
      ]),
      'k2',
    );
    const before = new Keyring(new Map([['k1', k1]]));
    const payload = before.encryptBytes(Buffer.from('p'), 'temporal-payload');
    expect(payload.keyId).toBe('k1');
    expect(rotated.decryptBytes('k1', payload.data, 'temporal-payload').toString()).toBe('p');
    expect(rotated.decrypt(before.encrypt('c', 'aad'), 'aad')).toBe('c');
    expect(rotated.encryptBytes(Buffer.from('p'), 'x').keyId).toBe('k2');
  });
});

describe("finding 6: an agent's worker holds the payload keys alone", () => {
  it('seals and opens payloads the full keyring reads, opens no secret at rest, and plugs into SwitchboardPlugin.fromEnv', async () => {
    const full = new Keyring(
      new Map([
        ['k1', k1],
        ['k2', k2],
      ]),
      'k2',
    );
    const exported = full.exportPayloadKeys();
    expect(exported.split(',').map((e) => e.split(':')[0])).toEqual(['k2', 'k1']);
    expect(exported).not.toContain(k1.toString('base64'));
    const agent = Keyring.payloadOnly(new Map(exported.split(',').map((e) => [e.split(':')[0], Buffer.from(e.split(':')[1], 'base64')])));
    const fromAgent = new KeyringPayloadCodec(agent);
    const fromSwitchboard = new KeyringPayloadCodec(full, { refuseUnsealed: true });
    const payload = { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('{"tenantId":"t"}') };
    expect((await fromSwitchboard.decode(await fromAgent.encode([payload])))[0].data).toEqual(payload.data);
    expect((await fromAgent.decode(await fromSwitchboard.encode([payload])))[0].data).toEqual(payload.data);
    expect(() => agent.decrypt(full.encrypt('gho_token', 'account:t:a:credential'), 'account:t:a:credential')).toThrow(/no key/);
    expect(() => agent.encrypt('x', 'aad')).toThrow(/no key/);
    expect(SwitchboardPlugin.fromEnv({ SWITCHBOARD_PAYLOAD_KEYS: exported }).name).toBe('switchboard');
    expect(() => SwitchboardPlugin.fromEnv({ SWITCHBOARD_PAYLOAD_KEYS: 'k1:short' })).toThrow(/^SWITCHBOARD_PAYLOAD_KEYS: /);
  });

  it("finding 7: Switchboard's worker codec refuses a plain payload and one sealed under an unknown key, naming why", async () => {
    const strict = new KeyringPayloadCodec(new Keyring(new Map([['k1', k1]])), { refuseUnsealed: true });
    const plain = { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('{"userId":"u"}') };
    await expect(strict.decode([plain])).rejects.toThrow(UNSEALED_MESSAGE);
    const foreign = await new KeyringPayloadCodec(new Keyring(new Map([['k1', k2]]))).encode([plain]);
    await expect(strict.decode(foreign)).rejects.toThrow(UNSEALED_MESSAGE);
    await expect(new KeyringPayloadCodec(new Keyring(new Map([['k1', k1]]))).decode([plain])).resolves.toEqual([plain]);
  });
  describe('a payload is bound to the workflow that owns it', () => {
    const keyring = () => new Keyring(new Map([['k1', k1]]));
    const batch = { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('{"calls":[{"tool":"github_delete_repo"}]}') };
    const of = (workflowId: string, namespace = 'default') => ({ type: 'workflow' as const, namespace, workflowId });

    it("refuses, on Switchboard's worker, a sealed input copied into another workflow (attacker: whoever can read a history and start workflows)", async () => {
      const sealed = await new KeyringPayloadCodec(keyring()).encode([batch], of('batch-alice-1'));
      const strict = new KeyringPayloadCodec(keyring(), { refuseUnsealed: true });
      await expect(strict.decode(sealed, of('batch-attacker-1'))).rejects.toThrow(/sealed for workflow "batch-alice-1", not this one/);
      await expect(strict.decode(sealed, of('batch-alice-1', 'other-namespace'))).rejects.toThrow(UNSEALED_MESSAGE);
      expect((await strict.decode(sealed, of('batch-alice-1')))[0].data).toEqual(batch.data);
      // The activity the workflow schedules opens its input under the same owner.
      const activity = { type: 'activity' as const, namespace: 'default', workflowId: 'batch-alice-1', activityId: '1', isLocal: true };
      expect((await strict.decode(sealed, activity))[0].data).toEqual(batch.data);
      // The codec endpoint and replays, which decode with no workflow at hand, still open it.
      expect((await new KeyringPayloadCodec(keyring()).decode(sealed))[0].data).toEqual(batch.data);
    });

    it('refuses a payload whose owner was rewritten or removed (the owner is sealed into the ciphertext)', async () => {
      const strict = new KeyringPayloadCodec(keyring(), { refuseUnsealed: true });
      const [sealed] = await new KeyringPayloadCodec(keyring()).encode([batch], of('batch-alice-1'));
      const rewritten = { ...sealed, metadata: { ...sealed.metadata, 'encryption-owner': Buffer.from('["default","batch-attacker-1"]') } };
      await expect(strict.decode([rewritten], of('batch-attacker-1'))).rejects.toThrow(UNSEALED_MESSAGE);
      const { 'encryption-owner': _owner, ...unbound } = sealed.metadata ?? {};
      const downgraded = { ...sealed, metadata: { ...unbound, 'encryption-scheme': Buffer.from('switchboard-payload-v2') } };
      await expect(strict.decode([downgraded], of('batch-attacker-1'))).rejects.toThrow(UNSEALED_MESSAGE);
      // Without its owner it reads as a payload of the legacy key, which does not open it either.
      const ownerless = { ...sealed, metadata: unbound };
      await expect(strict.decode([ownerless], of('batch-alice-1'))).rejects.toThrow(UNSEALED_MESSAGE);
      const twoSchemes = { ...sealed, metadata: { ...sealed.metadata, 'encryption-scheme': Buffer.from('switchboard-payload-v2') } };
      await expect(strict.decode([twoSchemes], of('batch-alice-1'))).rejects.toThrow(/with an owner/);
      const unreadable = { ...sealed, metadata: { ...sealed.metadata, 'encryption-owner': Buffer.from('batch-alice-1') } };
      await expect(strict.decode([unreadable], of('batch-alice-1'))).rejects.toThrow(/without a readable owner/);
    });

    it("opens a Schedule's action in each run the schedule starts (the id followed by the run's time), and nowhere else", async () => {
      const strict = new KeyringPayloadCodec(keyring(), { refuseUnsealed: true });
      const sealed = await new KeyringPayloadCodec(keyring()).encode([batch], of('prune-switchboard'));
      expect((await strict.decode(sealed, of('prune-switchboard-2026-12-04T03:00:00Z')))[0].data).toEqual(batch.data);
      await expect(strict.decode(sealed, of('prune-switchboard-evil'))).rejects.toThrow(UNSEALED_MESSAGE);
      await expect(strict.decode(sealed, of('prune-switchboard2-2026-12-04T03:00:00Z'))).rejects.toThrow(UNSEALED_MESSAGE);
      // A batch's input is not a schedule's: a copy started as "<batch id>-<time>" opens nothing.
      const batchInput = await new KeyringPayloadCodec(keyring()).encode([batch], of('batch-alice-1'));
      await expect(strict.decode(batchInput, of('batch-alice-1-2026-12-04T03:00:00Z'))).rejects.toThrow(UNSEALED_MESSAGE);
    });

    it('seals unbound when the SDK names no workflow, and such a payload opens anywhere', async () => {
      const [sealed] = await new KeyringPayloadCodec(keyring()).encode([batch]);
      expect(Buffer.from(sealed.metadata?.['encryption-scheme'] ?? []).toString()).toBe('switchboard-payload-v2');
      const strict = new KeyringPayloadCodec(keyring(), { refuseUnsealed: true });
      expect((await strict.decode([sealed], of('any')))[0].data).toEqual(batch.data);
    });
  });
});
