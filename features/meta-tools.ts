import { waitForApproval, waitForApprovalAgent } from './approvals/tools/wait-for-approval.js';
import { connectionsSearch } from './catalog/tools/connections-search.js';
import { getToolSchema } from './catalog/tools/get-tool-schema.js';
import { listIntegrations } from './catalog/tools/list-integrations.js';
import { searchTools } from './catalog/tools/search-tools.js';
import { connect, getAuthUrl } from './connections/tools/connect.js';
import { disconnect } from './connections/tools/disconnect.js';
import { listConnections } from './connections/tools/list-connections.js';
import { waitForConnection } from './connections/tools/wait-for-connection.js';
import { connectionsExecute } from './execution/tools/connections-execute.js';
import { executeTools } from './execution/tools/execute-tools.js';
import type { MetaTool } from './meta-tool.js';
import { readResult } from './results/tools/read-result.js';

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
