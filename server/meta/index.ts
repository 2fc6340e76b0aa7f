import { connect, getAuthUrl } from './connect.js';
import { disconnect } from './disconnect.js';
import { listConnections } from './list-connections.js';
import { listIntegrations } from './list-integrations.js';
import type { MetaTool } from './meta-tool.js';
import { waitForConnection } from './wait-for-connection.js';

/** The meta-tools, by name. search_tools, get_tool_schema and execute_tools join with the catalog. */
export const META_TOOLS: readonly MetaTool[] = [listIntegrations, connect, getAuthUrl, waitForConnection, listConnections, disconnect];

export const metaToolByName = new Map(META_TOOLS.map((t) => [t.name, t]));
