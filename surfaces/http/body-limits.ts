/**
 * What a request body may weigh, in express's notation, by route (docs/reference/limits.md lists
 * them with every other bound). Portal forms have their own, smaller one (portal/form-body.ts).
 */

/** The JSON API's and MCP's bodies: a batch of 500 calls' arguments fits. */
export const JSON_BODY_LIMIT = '1mb';

/** /codec: Temporal UI sends a history's payloads to decode in one request. */
export const CODEC_BODY_LIMIT = '4mb';
