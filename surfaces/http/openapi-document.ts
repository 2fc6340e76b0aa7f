import type { Config } from '../../core/config.js';
import { TOOL_ERROR_CODES } from '../../core/execution.js';
import { inputJsonSchema } from '../../core/json-schema.js';
import type { MetaTool } from '../../features/meta-tool.js';
import { AGENT_TOOLS, META_TOOLS } from '../../features/meta-tools.js';
import pkg from '../../package.json' with { type: 'json' };
import { MAX_RETRY_AFTER_SEC } from '../../providers/sdk/rate-limit.js';

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

/** Answers every tool route may give besides its own 200, by status. */
const commonErrors = {
  '401': errorResponse('Missing, invalid or revoked API key (with a WWW-Authenticate header)'),
  '403': errorResponse("Not allowed by the organisation's settings"),
  '404': errorResponse('Unknown tool, integration, account or connectionId'),
  '413': errorResponse('The request body is larger than 1 MB'),
  '415': errorResponse('The request body is not application/json'),
  '429': {
    ...errorResponse('Too many requests for this API key; see the RateLimit and RateLimit-Policy headers'),
    headers: {
      RateLimit: { description: 'Remaining quota and reset (IETF draft-8)', schema: { type: 'string' } },
      'RateLimit-Policy': { description: 'The quota policy (IETF draft-8)', schema: { type: 'string' } },
      'Retry-After': { description: 'Seconds until the quota resets', schema: { type: 'integer' } },
    },
  },
  '503': errorResponse('Temporal or an OAuth client is not available right now; try again shortly'),
};

function operation(tool: MetaTool, agentSurface: boolean) {
  const badRequest = agentSurface
    ? {
        description: 'Malformed JSON, a body that is not an object (Error), or arguments that do not fit the schema (AgentError)',
        content: {
          'application/json': { schema: { oneOf: [{ $ref: '#/components/schemas/Error' }, { $ref: '#/components/schemas/AgentError' }] } },
        },
      }
    : errorResponse('Malformed JSON, a body that is not an object, or arguments that do not fit the schema (each one named)');
  return {
    post: {
      operationId: tool.name,
      summary: tool.description.split(/(?<=\.)\s/)[0],
      description: tool.description,
      tags: [agentSurface ? 'agent tools' : 'meta-tools'],
      ...(tool.description.startsWith('Deprecated') ? { deprecated: true } : {}),
      security: [{ bearerAuth: [] }],
      requestBody: {
        required: false,
        description: "The tool's arguments as a JSON object (an empty body is {}).",
        content: { 'application/json': { schema: inputJsonSchema(tool) } },
      },
      responses: {
        '200': {
          description: "The tool's answer",
          content: { 'application/json': { schema: { type: 'object' } } },
        },
        '400': badRequest,
        ...commonErrors,
      },
    },
  };
}

let built: { baseUrl: string; document: Record<string, unknown> } | undefined;

/**
 * The OpenAPI 3.1 document of the JSON API: one `POST /v1/tools/<name>` per meta-tool and agent tool, each request
 * schema generated from the tool's zod input schema (so it cannot drift from what the handler accepts). Built once.
 */
export function buildOpenApiDocument(config: Pick<Config, 'PUBLIC_BASE_URL'>): Record<string, unknown> {
  if (built?.baseUrl === config.PUBLIC_BASE_URL) return built.document;
  const paths: Record<string, unknown> = {};
  for (const tool of META_TOOLS) paths[`/v1/tools/${tool.name}`] = operation(tool, false);
  for (const tool of AGENT_TOOLS) paths[`/v1/tools/${tool.name}`] = operation(tool, true);
  const document = {
    openapi: '3.1.0',
    info: { title: pkg.name, version: pkg.version, description: pkg.description },
    servers: [{ url: config.PUBLIC_BASE_URL }],
    tags: [
      { name: 'meta-tools', description: 'Find integrations, connect accounts, find and run tools' },
      { name: 'agent tools', description: 'The two-tool agent surface: connections_search and connections_execute' },
    ],
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'A Switchboard API key; the caller is always its user' },
      },
      schemas: {
        Error: {
          type: 'object',
          properties: { error: { type: 'string', description: 'What went wrong, for a person or a model to read' } },
          required: ['error'],
        },
        AgentError: {
          type: 'object',
          properties: {
            ok: { const: false },
            error: {
              type: 'object',
              properties: {
                code: {
                  type: 'string',
                  enum: [...TOOL_ERROR_CODES],
                  description:
                    'rate_limited: the service refused for now; run the call again after retryAfterSec. outcome_unknown: the call may have ' +
                    'reached the service and its answer was lost; check before retrying it. approval_required: a person ' +
                    'must approve the call first (give them url, then wait_for_approval with approvalId); nothing ran',
                },
                message: { type: 'string' },
                status: { type: 'integer', description: "tool_failed, rate_limited: the provider's HTTP status" },
                integration: { type: 'string' },
                retryAfterSec: {
                  type: 'integer',
                  minimum: 0,
                  maximum: MAX_RETRY_AFTER_SEC,
                  description: 'rate_limited: seconds until the service takes calls again',
                },
                reason: {
                  type: 'string',
                  description: 'needs_reauth after a step-up challenge (403 insufficient_scope): the access the new consent must grant',
                },
                approvalId: { type: 'string', description: 'approval_required: the approval to wait for (wait_for_approval)' },
                url: { type: 'string', description: 'approval_required: the portal page where a person approves or denies the call' },
                summary: {
                  type: 'object',
                  description: 'approval_required: what will run, as the person sees it (secret arguments redacted, long values cut)',
                  properties: {
                    tool: { type: 'string' },
                    account: { type: ['string', 'null'] },
                    arguments: { type: 'object' },
                  },
                },
                approvalStatus: {
                  type: 'string',
                  enum: ['PENDING', 'APPROVED', 'DENIED', 'EXPIRED'],
                  description: 'approval_required on a request sent again with its requestId: where the approval stands',
                },
                issues: {
                  type: 'array',
                  items: {
                    type: 'object',
                    properties: { path: { type: 'array', items: { type: 'string' } }, message: { type: 'string' } },
                    required: ['path', 'message'],
                  },
                },
              },
              required: ['code', 'message'],
            },
          },
          required: ['ok', 'error'],
        },
      },
    },
  };
  built = { baseUrl: config.PUBLIC_BASE_URL, document };
  return document;
}
