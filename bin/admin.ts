// The admin CLI's entry point: the commands live in bin/admin/ (main.ts dispatches).
import { resolve } from 'node:path';
import { runAdmin } from './admin/main.js';
import { useLocalSecrets } from './support/local-secrets.js';

// Next to `npm start` in development, the secrets it generated (README: `payload-keys` for the agent example).
useLocalSecrets(resolve(process.env.SWITCHBOARD_DATA_DIR ?? '.data'));

const write = (stream: NodeJS.WriteStream) => (s: string) => void stream.write(s);
process.exitCode = await runAdmin(process.argv.slice(2), {
  stdout: write(process.stdout),
  stderr: write(process.stderr),
  env: process.env,
});
