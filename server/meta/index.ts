import { connectionsExecute } from '../agent-tools/connections-execute.js';
import { connectionsSearch } from '../agent-tools/connections-search.js';
import { connect, getAuthUrl } from './connect.js';
import { disconnect } from './disconnect.js';
import { executeTools } from './execute-tools.js';
import { getToolSchema } from './get-tool-schema.js';
import { listConnections } from './list-connections.js';
import { listIntegrations } from './list-integrations.js';
import type { MetaTool } from './meta-tool.js';
import { readResult } from './read-result.js';
import { searchTools } from './search-tools.js';
import { waitForApproval, waitForApprovalAgent } from './wait-for-approval.js';
import { waitForConnection } from './wait-for-connection.js';

/** The meta-tools of the MCP surface (the spec's nine, wait_for_approval, then read_result), in the order a model meets them. */
export const META_TOOLS: readonly MetaTool[] = [
  listIntegrations,
  connect,
  getAuthUrl,
  waitForConnection,
  searchTools,
  getToolSchema,
  executeTools,
  waitForApproval,
  listConnections,
  disconnect,
  readResult,
];

/** The two-tool agent surface: connections_search and connections_execute. */
export const AGENT_TOOLS: readonly MetaTool[] = [connectionsSearch, connectionsExecute];

/** What /mcp/agent lists: the two agent tools, wait_for_approval (its result shaped as theirs), and read_result for the rest of a cut result. */
export const AGENT_MCP_TOOLS: readonly MetaTool[] = [...AGENT_TOOLS, waitForApprovalAgent, readResult];

/** Every tool the JSON API serves at POST /v1/tools/<name>. */
export const httpToolByName = new Map([...META_TOOLS, ...AGENT_TOOLS].map((t) => [t.name, t]));
