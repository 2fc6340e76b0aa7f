import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateKey } from '../../platform/database/keyring.js';

/**
 * For `npm start` on a laptop: secrets that production must set are generated once and kept in
 * the data directory (mode 600), so restarts can still read what was encrypted before.
 */
export function ensureLocalSecrets(dataDir: string, env: NodeJS.ProcessEnv = process.env): void {
  const file = join(dataDir, 'local-secrets.json');
  mkdirSync(dataDir, { recursive: true });
  let secrets: { ENCRYPTION_KEYS: string; PORTAL_SIGNING_SECRET: string };
  if (existsSync(file)) {
    secrets = JSON.parse(readFileSync(file, 'utf8'));
  } else {
    secrets = { ENCRYPTION_KEYS: `local1:${generateKey()}`, PORTAL_SIGNING_SECRET: randomBytes(32).toString('base64url') };
    writeFileSync(file, JSON.stringify(secrets, null, 2), { mode: 0o600 });
  }
  env.ENCRYPTION_KEYS ||= secrets.ENCRYPTION_KEYS;
  env.PORTAL_SIGNING_SECRET ||= secrets.PORTAL_SIGNING_SECRET;
}

/**
 * For the admin CLI next to `npm start` in development: the secrets npm start generated, when the
 * environment sets none and the file exists (nothing is created here). Production reads only the
 * environment.
 */
export function useLocalSecrets(dataDir: string, env: NodeJS.ProcessEnv = process.env): void {
  const file = join(dataDir, 'local-secrets.json');
  if (env.NODE_ENV === 'production' || !existsSync(file)) return;
  const secrets = JSON.parse(readFileSync(file, 'utf8')) as { ENCRYPTION_KEYS?: string; PORTAL_SIGNING_SECRET?: string };
  env.ENCRYPTION_KEYS ||= secrets.ENCRYPTION_KEYS;
  env.PORTAL_SIGNING_SECRET ||= secrets.PORTAL_SIGNING_SECRET;
}
