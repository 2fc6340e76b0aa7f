import { createInterface } from 'node:readline';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { type HostileUpstreamCounts, type HostileUpstreamOptions, hostileSchema, hostileToolName } from './hostile-upstream.js';
import { startTestUpstream } from './mcp-upstream-server.js';

// The hostile upstream's own process (started by hostile-upstream.ts): prints {"url"} once
// listening, then takes `attack` / `quiet` lines on stdin; ends when stdin closes.

const options = JSON.parse(process.env.HOSTILE_UPSTREAM ?? '{}') as HostileUpstreamOptions;
const names = Array.from({ length: options.tools }, (_, i) => hostileToolName(i));
const listedSchemas = Object.fromEntries(names.map((name, i) => [name, hostileSchema(i, options.schemaBytes)]));

let calls = 0;
const slowTools = (server: McpServer) => {
  for (const name of names) {
    server.registerTool(name, { description: `Hostile tool ${name}` }, async () => {
      calls++;
      await new Promise((resolve) => setTimeout(resolve, options.callMs));
      return { content: [{ type: 'text', text: name }] };
    });
  }
};

const upstream = await startTestUpstream({ listedSchemas, listPageSize: options.pageSize, extraTools: slowTools });
let counts: HostileUpstreamCounts = { announced: 0, listPages: 0, calls: 0 };
let seen = { listPages: 0, calls: 0 };
let announcing: NodeJS.Timeout | undefined;

createInterface({ input: process.stdin })
  .on('line', (command) => {
    if (command === 'attack' && !announcing) {
      counts = { announced: 0, listPages: 0, calls: 0 };
      seen = { listPages: upstream.listPages, calls };
      announcing = setInterval(() => {
        counts.announced += upstream.announceToolsChanged();
      }, options.announceMs);
    } else if (command === 'quiet') {
      clearInterval(announcing);
      announcing = undefined;
      counts.calls = calls - seen.calls;
      counts.listPages = upstream.listPages - seen.listPages;
      process.stdout.write(`${JSON.stringify(counts)}\n`);
    }
  })
  .on('close', () => {
    clearInterval(announcing);
    void upstream.close().finally(() => process.exit(0));
  });

process.stdout.write(`${JSON.stringify({ url: upstream.url })}\n`);
