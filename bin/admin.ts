// The admin CLI's entry point: the commands live in bin/admin/ (main.ts dispatches).
import { runAdmin } from './admin/main.js';

const write = (stream: NodeJS.WriteStream) => (s: string) => void stream.write(s);
process.exitCode = await runAdmin(process.argv.slice(2), {
  stdout: write(process.stdout),
  stderr: write(process.stderr),
  env: process.env,
});
