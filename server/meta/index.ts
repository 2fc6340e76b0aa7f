import { connectionsExecute } from '../agent-tools/connections-execute.js';
import { connectionsSearch } from '../agent-tools/connections-search.js';
import { connect, getAuthUrl } from './connect.js';
import { disconnect } from './disconnect.js';
import { executeTools } from './execute-tools.js';
import { getToolSchema } from './get-tool-schema.js';
import { listConnections } from './list-connections.js';
import { listIntegrations } from './list-integrations.js';
import type { MetaTool } from './meta-tool.js';
import { searchTools } from './search-tools.js';
import { waitForConnection } from './wait-for-connection.js';

/** The nine meta-tools of the MCP surface, in the order a model meets them. */
export const META_TOOLS: readonly MetaTool[] = [
  listIntegrations,
  connect,
  getAuthUrl,
  waitForConnection,
  searchTools,
  getToolSchema,
  executeTools,
  listConnections,
  disconnect,
];

/** The two-tool agent surface: connections_search and connections_execute. */
export const AGENT_TOOLS: readonly MetaTool[] = [connectionsSearch, connectionsExecute];

/** Every tool the JSON API serves at POST /v1/tools/<name>. */
export const httpToolByName = new Map([...META_TOOLS, ...AGENT_TOOLS].map((t) => [t.name, t]));
