import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { DemoState } from './demo-state.js';

/** Records that belong to a grant: revoking the grant (a disconnect's revocation) removes them all. */
const GRANT_MEMBERS = new Set(['AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest']);

/**
 * oidc-provider's storage, kept in the demo's state (demo-state.ts) so it is saved with it. A
 * handful of records at most: lookups by uid, user code or grant scan them.
 */
export function oauthRecords(state: DemoState): (model: string) => Adapter {
  const records = state.data.records;
  const live = (key: string) => {
    const record = records[key];
    if (!record) return undefined;
    if (record.expiresAt !== undefined && record.expiresAt <= Date.now()) {
      delete records[key];
      return undefined;
    }
    return record.payload as AdapterPayload;
  };
  const findWhere = (model: string, test: (payload: AdapterPayload) => boolean) => {
    for (const key of Object.keys(records)) {
      if (!key.startsWith(`${model}:`)) continue;
      const payload = live(key);
      if (payload && test(payload)) return payload;
    }
    return undefined;
  };

  return (model) => {
    const keyOf = (id: string) => `${model}:${id}`;
    return {
      async upsert(id, payload, expiresIn) {
        records[keyOf(id)] = {
          payload: payload as Record<string, unknown>,
          ...(expiresIn && { expiresAt: Date.now() + expiresIn * 1000 }),
        };
        state.save();
      },
      async find(id) {
        return live(keyOf(id));
      },
      async findByUid(uid) {
        return findWhere(model, (p) => p.uid === uid);
      },
      async findByUserCode(userCode) {
        return findWhere(model, (p) => p.userCode === userCode);
      },
      async consume(id) {
        const payload = live(keyOf(id));
        if (payload) payload.consumed = Math.floor(Date.now() / 1000);
        state.save();
      },
      async destroy(id) {
        delete records[keyOf(id)];
        state.save();
      },
      async revokeByGrantId(grantId) {
        for (const [key, record] of Object.entries(records)) {
          if (GRANT_MEMBERS.has(key.slice(0, key.indexOf(':'))) && record.payload.grantId === grantId) delete records[key];
        }
        state.save();
      },
    };
  };
}
