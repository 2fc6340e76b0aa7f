import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { freePort } from './ports.js';

/** server-everything's folder: the devDependency, or SERVER_EVERYTHING_DIR where node_modules is shared. */
function everythingEntry(): string {
  const dir = process.env.SERVER_EVERYTHING_DIR;
  if (dir) return join(dir, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')), 'dist/index.js');
}

/** @modelcontextprotocol/server-everything (a devDependency) over Streamable HTTP on a free 127.0.0.1 port. */
export async function startEverything(): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [everythingEntry(), 'streamableHttp'], {
    env: { PATH: process.env.PATH, PORT: String(port) },
    stdio: 'pipe',
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('server-everything did not start')), 30_000);
    child.stderr!.on('data', (d: Buffer) => {
      if (d.toString().includes('listening')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on('exit', (code) => reject(new Error(`server-everything exited with ${code}`)));
  });
  return { child, url: `http://127.0.0.1:${port}/mcp` };
}
