import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

/**
 * Writes test/fixtures/search-catalogs/<name>.json: the tools/list of published MCP servers from npm,
 * the real catalogs the search evaluation ranks (bench/lib/real-catalogs.ts). Each server is installed
 * into a cache directory (not the project's dependencies), started over stdio with placeholder
 * credentials (listing needs none of them to be real), listed once, and stopped. Nothing but the
 * npm registry is reached. Run again to refresh the listings:
 *
 *   node --import tsx bench/search-capture-catalogs.ts [cache-dir]
 */

interface Server {
  /** The integration name the evaluation gives it. */
  name: string;
  displayName: string;
  /** What an operator would write as its description: the package's own summary. */
  package: string;
  /** Path of the script to run, inside the package. */
  bin: string;
  args?: (cache: string) => string[];
  env?: (cache: string) => Record<string, string>;
}

const SERVERS: Server[] = [
  { name: 'playwright', displayName: 'Playwright', package: '@playwright/mcp', bin: 'cli.js', args: () => ['--headless'] },
  {
    name: 'notion',
    displayName: 'Notion',
    package: '@notionhq/notion-mcp-server',
    bin: 'bin/cli.mjs',
    env: () => ({ NOTION_TOKEN: 'placeholder' }),
  },
  {
    name: 'github-mcp',
    displayName: 'GitHub MCP',
    package: '@modelcontextprotocol/server-github',
    bin: 'dist/index.js',
    env: () => ({ GITHUB_PERSONAL_ACCESS_TOKEN: 'placeholder' }),
  },
  {
    name: 'filesystem',
    displayName: 'Filesystem',
    package: '@modelcontextprotocol/server-filesystem',
    bin: 'dist/index.js',
    args: (cache) => [cache],
  },
  { name: 'memory', displayName: 'Memory', package: '@modelcontextprotocol/server-memory', bin: 'dist/index.js' },
  {
    name: 'kubernetes',
    displayName: 'Kubernetes',
    package: 'mcp-server-kubernetes',
    bin: 'dist/index.js',
    // It stops at start-up when KUBECONFIG names no file: one naming an unreachable cluster is enough to list.
    env: (cache) => ({ KUBECONFIG: join(cache, 'kubeconfig.yaml') }),
  },
  {
    name: 'slack-mcp',
    displayName: 'Slack MCP',
    package: '@modelcontextprotocol/server-slack',
    bin: 'dist/index.js',
    env: () => ({ SLACK_BOT_TOKEN: 'xoxb-placeholder', SLACK_TEAM_ID: 'T000' }),
  },
  {
    name: 'gitlab',
    displayName: 'GitLab',
    package: '@modelcontextprotocol/server-gitlab',
    bin: 'dist/index.js',
    env: () => ({ GITLAB_PERSONAL_ACCESS_TOKEN: 'placeholder' }),
  },
  {
    name: 'google-maps',
    displayName: 'Google Maps',
    package: '@modelcontextprotocol/server-google-maps',
    bin: 'dist/index.js',
    env: () => ({ GOOGLE_MAPS_API_KEY: 'placeholder' }),
  },
  {
    name: 'brave-search',
    displayName: 'Brave Search',
    package: '@modelcontextprotocol/server-brave-search',
    bin: 'dist/index.js',
    env: () => ({ BRAVE_API_KEY: 'placeholder' }),
  },
];

const CATALOGS_DIR = resolve(import.meta.dirname, '../test/fixtures/search-catalogs');

async function capture(server: Server, cache: string) {
  const root = join(cache, 'node_modules', server.package);
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string; description?: string };
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(root, server.bin), ...(server.args?.(cache) ?? [])],
    env: { PATH: process.env.PATH ?? '', HOME: cache, ...server.env?.(cache) },
    stderr: 'ignore',
  });
  const client = new Client({ name: 'switchboard-search-capture', version: '1' });
  await client.connect(transport);
  try {
    const tools: unknown[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : {});
      for (const t of page.tools)
        tools.push({ name: t.name, title: t.title, description: t.description, inputSchema: t.inputSchema, annotations: t.annotations });
      cursor = page.nextCursor;
    } while (cursor);
    const out = {
      about: `tools/list of ${server.package}@${pkg.version}, written by bench/search-capture-catalogs.ts`,
      source: `${server.package}@${pkg.version}`,
      name: server.name,
      displayName: server.displayName,
      description: pkg.description ?? '',
      tools,
    };
    writeFileSync(join(CATALOGS_DIR, `${server.name}.json`), `${JSON.stringify(out, null, 1)}\n`);
    console.log(`${server.name}: ${tools.length} tools`);
  } finally {
    await client.close();
  }
}

async function main() {
  const cache = resolve(process.argv[2] ?? '/tmp/switchboard-search-catalogs');
  mkdirSync(cache, { recursive: true });
  mkdirSync(CATALOGS_DIR, { recursive: true });
  writeFileSync(
    join(cache, 'kubeconfig.yaml'),
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters: [{name: local, cluster: {server: "https://127.0.0.1:1"}}]',
      'contexts: [{name: local, context: {cluster: local, user: local}}]',
      'current-context: local',
      'users: [{name: local, user: {token: placeholder}}]',
      '',
    ].join('\n'),
  );
  const missing = SERVERS.filter((s) => !existsSync(join(cache, 'node_modules', s.package, 'package.json'))).map((s) => s.package);
  if (missing.length)
    execFileSync('npm', ['install', '--prefix', cache, '--ignore-scripts', '--no-audit', '--no-fund', ...missing], { stdio: 'inherit' });
  for (const server of SERVERS) {
    try {
      await capture(server, cache);
    } catch (error) {
      console.error(`${server.name}: ${(error as Error).message}`);
    }
  }
}

await main();
