import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import type { ListedTool } from '../../core/ports/upstream-tool-catalogs.js';
import { upstreamProvider } from '../../providers/remote-mcp/index.js';
import { startEverything } from './server-everything.js';

/**
 * Writes test/fixtures/upstream-everything-catalog.json: the tool listing of
 * @modelcontextprotocol/server-everything (the devDependency) exactly as Switchboard saves a listing
 * it made itself (the shared catalog of docs/guides/upstream-mcp.md): the server is started, listed by an
 * upstream provider built as the deployment builds one, and what that provider hands its catalog
 * store is written out. The search evaluation ranks these tools beside the built-in ones without
 * starting anything (bench/lib/eval-catalog.ts). Run again after upgrading the package:
 *
 *   node --import tsx test/support/capture-everything-catalog.ts
 */
const OUT = resolve(import.meta.dirname, '../fixtures/upstream-everything-catalog.json');

const require = createRequire(import.meta.url);
const pkg = JSON.parse(readFileSync(require.resolve('@modelcontextprotocol/server-everything/package.json'), 'utf8')) as {
  name: string;
  version: string;
};

const server = await startEverything();
try {
  let saved: ListedTool[] | undefined;
  const provider = upstreamProvider(
    { name: 'everything', displayName: 'Everything', url: server.url, auth: { type: 'none' } },
    {
      allowedHosts: [{ host: '127.0.0.1' }],
      maxResponseBytes: 1024 * 1024,
      toolsTtlSec: 300,
      version: 'capture',
      catalog: {
        load: async () => undefined,
        save: async (_key, tools) => {
          saved = tools;
        },
      },
    },
  );
  await provider.dynamicTools?.list({ type: 'none' }, AbortSignal.timeout(30_000));
  await provider.dynamicTools?.close();
  if (!saved?.length) throw new Error('server-everything listed no tools');
  const fixture = {
    about: [
      `The tools of ${pkg.name} ${pkg.version} as Switchboard saves an upstream server's listing (upstream_tool_catalogs).`,
      'Written by test/support/capture-everything-catalog.ts; read by bench/lib/eval-catalog.ts for the search evaluation.',
    ],
    source: `${pkg.name}@${pkg.version}`,
    tools: saved,
  };
  writeFileSync(OUT, `${JSON.stringify(fixture, null, 1)}\n`);
  console.log(`${saved.length} tools → ${OUT}`);
} finally {
  server.child.kill();
}
