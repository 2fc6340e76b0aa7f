import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { JWK } from 'jose';
import type { Task } from './task-board.js';

/**
 * Everything the demo keeps: its authorization server's records (clients, grants, tokens,
 * sessions), its signing and cookie keys, and each demo account's tasks. With a file (npm start's
 * `.data/demo-state.json`, mode 600) it survives a restart the way Switchboard's own data does, so
 * a demo account connected yesterday still refreshes today; without one (tests) it lives in memory.
 */
export interface DemoStateData {
  /** oidc-provider records by `<model>:<id>`, with their expiry (epoch ms) when they have one. */
  records: Record<string, { payload: Record<string, unknown>; expiresAt?: number }>;
  /** Each demo account's to-do list. */
  boards: Record<string, Task[]>;
  /** Refreshes made on each grant, for `whoami` (Switchboard refreshes on its own; this shows it). */
  refreshes: Record<string, number>;
  /** The signing key of the authorization server (it issues no ID token here, but needs one). */
  signingKey: JWK;
  /** Keys of the authorization server's signed cookies. */
  cookieKeys: string[];
}

export class DemoState {
  readonly data: DemoStateData;

  constructor(private readonly file?: string) {
    this.data = file && existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as DemoStateData) : freshState();
    this.data.refreshes ??= {};
  }

  /** Writes the file (a new file renamed over the old: a crash never leaves half a file). */
  save(): void {
    if (!this.file) return;
    const now = Date.now();
    for (const [key, record] of Object.entries(this.data.records)) {
      if (record.expiresAt !== undefined && record.expiresAt <= now) delete this.data.records[key];
    }
    mkdirSync(dirname(this.file), { recursive: true });
    const temporary = `${this.file}.${process.pid}.tmp`;
    writeFileSync(temporary, JSON.stringify(this.data), { mode: 0o600 });
    renameSync(temporary, this.file);
  }
}

function freshState(): DemoStateData {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    records: {},
    boards: {},
    refreshes: {},
    signingKey: { ...(privateKey.export({ format: 'jwk' }) as JWK), use: 'sig', alg: 'RS256', kid: randomBytes(8).toString('hex') },
    cookieKeys: [randomBytes(32).toString('base64url')],
  };
}
