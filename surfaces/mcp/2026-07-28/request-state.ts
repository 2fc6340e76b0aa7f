import { createHash } from 'node:crypto';
import { type AuthInfo, createRequestStateCodec, type ServerContext } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { Caller } from '../../../core/caller.js';
import { canonicalJson } from '../../../core/canonical-json.js';
import type { ServiceContext } from '../../../features/context.js';

/**
 * The `requestState` of a 2026-07-28 tools/call that waits on a person (multi round-trip
 * requests): what the call has asked of the human so far, carried by the client from one round to
 * the next instead of being kept here. It comes back as attacker-controlled input, so it is
 * signed (the v2 SDK's HMAC codec, under a key derived from PORTAL_SIGNING_SECRET), expires, and
 * is bound to the caller (tenant and user) and the method: another user's state, an edited one or
 * an old one is refused before any handler runs (-32602). Inside, it names the call it belongs to
 * (tool and a digest of its arguments), which the handler checks. Signed, not encrypted: it holds
 * nothing the client was not already given (ids of its own attempts and approvals, their links).
 */

/** How long one round's state stays valid: each round mints a fresh one. */
export const REQUEST_STATE_TTL_SEC = 600;
/** Longer states are neither minted nor read (a handful of steps is a few kilobytes). */
const MAX_REQUEST_STATE_CHARS = 24_576;
/** Human steps one call may ask for over all its rounds; a call needing more answers as it stands. */
export const MAX_HUMAN_STEPS = 8;
/** A link longer than this is not asked for by URL (the call answers as it stands). */
export const MAX_STEP_URL_CHARS = 1_000;

const humanStep = z
  .object({
    kind: z.enum(['connect', 'approval']),
    /** The inputRequests key the step is asked under. */
    key: z.string().min(1).max(200),
    /** The connection attempt or approval. Empty for a connect step the caller turned out not to need (an account appeared). */
    id: z.string().max(100),
    integration: z.string().max(100).optional(),
    url: z.string().max(MAX_STEP_URL_CHARS),
    /** asked: sent, not yet answered; accepted: the person went to the link; declined: they would not. */
    answer: z.enum(['asked', 'accepted', 'declined']),
  })
  .strict();

const flowState = z
  .object({
    v: z.literal(1),
    tool: z.string().min(1).max(100),
    /** sha256 of the tool's arguments as the client sent them (canonical JSON). */
    call: z.string().length(43),
    /** The requestId every round runs the call under, so a round reads the recorded run instead of running it again. */
    requestId: z.string().min(1).max(200),
    steps: z.array(humanStep).max(MAX_HUMAN_STEPS),
  })
  .strict();

export type HumanStep = z.infer<typeof humanStep>;
export type FlowState = z.infer<typeof flowState>;

export const callDigest = (args: Record<string, unknown>) => createHash('sha256').update(canonicalJson(args)).digest('base64url');

/** How a 2026-07-28 request carries the caller into the SDK's handler context (the key itself is never put there). */
export const authInfoFor = (caller: Caller): AuthInfo => ({
  token: 'switchboard-api-key',
  clientId: caller.keyId ?? caller.userId,
  scopes: [],
  extra: { caller },
});

export function callerOf(authInfo: AuthInfo | undefined): Caller {
  const caller = authInfo?.extra?.caller as Caller | undefined;
  if (!caller) throw new Error('An MCP request reached its handler without a caller');
  return caller;
}

export interface RequestStateSeal {
  mint(state: FlowState, sctx: ServerContext): Promise<string | undefined>;
  /** The SDK's `requestState.verify` hook: the state, or a throw the SDK answers with -32602. */
  verify(state: string, sctx: ServerContext): Promise<FlowState>;
}

export function requestStateSeal(ctx: Pick<ServiceContext, 'signer'>): RequestStateSeal {
  const codec = createRequestStateCodec<FlowState>({
    key: ctx.signer.mac('mcp-request-state', 'hmac-key'),
    ttlSeconds: REQUEST_STATE_TTL_SEC,
    bind: (sctx) => {
      const caller = callerOf(sctx.http?.authInfo);
      return `${sctx.mcpReq.method}\0${caller.tenantId}\0${caller.userId}`;
    },
  });
  return {
    async mint(state, sctx) {
      const sealed = await codec.mint(flowState.parse(state), sctx);
      return sealed.length <= MAX_REQUEST_STATE_CHARS ? sealed : undefined;
    },
    async verify(state, sctx) {
      if (state.length > MAX_REQUEST_STATE_CHARS) throw new Error('too long');
      return flowState.parse(await codec.verify(state, sctx));
    },
  };
}
