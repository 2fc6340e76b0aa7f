import { createHash } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { UpstreamEntry } from '../../core/upstream-entry.js';
import { ProviderHttpError } from '../sdk/http.js';
import type { Credential } from '../sdk/index.js';
import { RequestOutcomeUnknown } from '../sdk/transport-loss.js';
import { watchForLostAnswer } from './lost-answer.js';
import { SessionPool } from './session-pool.js';
import { upstreamErrorText } from './upstream-error-text.js';

/** Most upstream sessions one process keeps open per server; the least recently used idle one closes first. */
const MAX_SESSIONS = 200;
/** An upstream session unused this long is closed (UPSTREAM_MCP_SESSION_IDLE_SEC's default). */
const DEFAULT_IDLE_MS = 5 * 60 * 1000;
/** The SDK's own request timeout is replaced by the caller's deadline signal. */
const NO_SDK_TIMEOUT_MS = 24 * 60 * 60 * 1000;

/** Who a session (and a tool list) belongs to: `shared` without a credential, else a hash of it. */
export function credentialKey(credential: Credential): string {
  if (credential.type === 'none') return 'shared';
  return createHash('sha256').update(JSON.stringify(credential)).digest('base64url').slice(0, 32);
}

/** The headers a credential puts on every request to the upstream (the key in its configured header). */
function credentialHeaders(entry: UpstreamEntry, credential: Credential): Record<string, string> {
  if (entry.auth.type === 'apikey' && credential.type === 'apikey' && credential.fields.apiKey) {
    return { [entry.auth.header]: `${entry.auth.prefix}${credential.fields.apiKey}` };
  }
  if (credential.type === 'oauth2') return { authorization: `Bearer ${credential.accessToken}` };
  return {};
}

/**
 * The upstream's answer as Switchboard's provider errors: a 401/403 is the credential's (with the
 * server's challenge, for a step-up), others the server's.
 */
function asProviderError(err: unknown, challenge?: string): unknown {
  if (err instanceof StreamableHTTPError && typeof err.code === 'number' && err.code >= 400) {
    const auth = err.code === 401 || err.code === 403;
    return new ProviderHttpError(err.code, err.message.replace(/^Streamable HTTP error: /, ''), undefined, auth ? challenge : undefined);
  }
  if (err instanceof McpError) return new Error(upstreamErrorText(err.code, err.message));
  return err;
}

interface Session {
  client: Client;
  transport: StreamableHTTPClientTransport | SSEClientTransport;
  /** The last `WWW-Authenticate` a 401/403 of this session carried (the SDK's errors drop headers). */
  challenge?: string;
  /** Set once the client closed: a call it fails with "Connection closed" lost its answer. */
  closed?: boolean;
}

/** What a session is opened with; the pool's defaults are what UPSTREAM_MCP_SESSION_IDLE_SEC defaults to. */
interface SessionLimits {
  /** Most sessions one process keeps per server (more only while every one is in use: session-pool.ts). */
  maxSessions?: number;
  /** Milliseconds an unused session stays open. */
  idleMs?: number;
}

/**
 * Open MCP client sessions to one upstream server, one per credential, reused across calls (the
 * server's `Mcp-Session-Id` is kept) and counted by the calls using them (session-pool.ts).
 * Streamable HTTP first; if the server refuses it the way a legacy server does (400/404/405 on
 * the first POST), the HTTP+SSE transport.
 */
export class UpstreamSessions {
  private readonly pool: SessionPool<Session>;

  constructor(
    private readonly entry: UpstreamEntry,
    private readonly fetch: FetchLike,
    private readonly version: string,
    /** A server said its tools changed (notifications/tools/list_changed) on this key's session. */
    private readonly onToolsChanged: (key: string) => void,
    limits: SessionLimits = {},
  ) {
    this.pool = new SessionPool<Session>({
      max: limits.maxSessions ?? MAX_SESSIONS,
      idleMs: limits.idleMs ?? DEFAULT_IDLE_MS,
      close: (session) => session.client.close(),
    });
  }

  /**
   * Runs `fn` on the credential's session. A session the server dropped (HTTP 404 on the session
   * id, which the spec makes the answer to a request the server did not take) is opened again and
   * `fn` runs once more: the first request never reached a tool. Nothing else is retried. A
   * session whose credential the server refuses (401/403) is let go.
   */
  async run<T>(credential: Credential, signal: AbortSignal, fn: (client: Client) => Promise<T>): Promise<T> {
    const key = credentialKey(credential);
    for (let attempt = 0; ; attempt++) {
      const lease = await this.pool.acquire(key, () => this.open(key, credentialHeaders(this.entry, credential), signal));
      const session = lease.session;
      try {
        return await fn(session.client);
      } catch (err) {
        const dropped =
          err instanceof StreamableHTTPError &&
          err.code === 404 &&
          session.transport instanceof StreamableHTTPClientTransport &&
          Boolean(session.transport.sessionId);
        const refused = err instanceof StreamableHTTPError && (err.code === 401 || err.code === 403);
        if (dropped || refused) lease.retire();
        if (dropped && attempt === 0) continue;
        throw asCallError(err, session);
      } finally {
        lease.release();
      }
    }
  }

  /** Request options for the SDK: the caller's deadline, not the SDK's 60 s default. */
  static options(signal: AbortSignal) {
    return { signal, timeout: NO_SDK_TIMEOUT_MS };
  }

  /** Every session let go: idle ones close now, those in use when their calls end. */
  closeAll(): Promise<void> {
    return this.pool.closeAll();
  }

  /** A new session for the credential; a failure (a refused credential) is the provider error, and takes no place. */
  private async open(key: string, headers: Record<string, string>, signal: AbortSignal): Promise<Session> {
    const holder: { challenge?: string; session?: Session } = {};
    try {
      return await this.connect(key, headers, signal, holder);
    } catch (err) {
      throw asProviderError(err, holder.challenge);
    }
  }

  private async connect(
    key: string,
    headers: Record<string, string>,
    signal: AbortSignal,
    holder: { challenge?: string; session?: Session },
  ): Promise<Session> {
    const url = new URL(this.entry.url);
    // Every answer of this session passes here: a 401/403's challenge is kept for the error it
    // becomes, and a request's answer stream is watched for ending without the answer.
    const fetch: FetchLike = async (input, init) => {
      const res = await this.fetch(input, init);
      if (res.status === 401 || res.status === 403) {
        const challenge = res.headers.get('www-authenticate') ?? undefined;
        holder.challenge = challenge;
        if (holder.session) holder.session.challenge = challenge;
      }
      return watchForLostAnswer(init, res, (id) => holder.session && answerLost(holder.session, id));
    };
    const streamable = new StreamableHTTPClientTransport(url, {
      fetch,
      requestInit: { headers },
      redirectPolicy: 'same-origin',
    });
    const client = this.newClient(key, holder);
    try {
      await client.connect(streamable, UpstreamSessions.options(signal));
      holder.session = { client, transport: streamable, challenge: holder.challenge };
      return holder.session;
    } catch (err) {
      await client.close().catch(() => {});
      const legacy = err instanceof StreamableHTTPError && (err.code === 400 || err.code === 404 || err.code === 405);
      if (!legacy) throw err;
    }
    const fallback = this.newClient(key, holder);
    const sse = new SSEClientTransport(url, {
      fetch,
      requestInit: { headers },
      eventSourceInit: {
        fetch: (u, init) => fetch(u, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } }),
      },
    });
    await fallback.connect(sse, UpstreamSessions.options(signal));
    holder.session = { client: fallback, transport: sse, challenge: holder.challenge };
    return holder.session;
  }

  private newClient(key: string, holder: { session?: Session }): Client {
    const client = new Client({ name: 'switchboard', version: this.version }, { capabilities: {} });
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => this.onToolsChanged(key));
    client.onclose = () => {
      const session = holder.session;
      if (session?.client !== client) return;
      session.closed = true;
      this.pool.retire(key, session);
    };
    return client;
  }
}

/**
 * The error a call's failure is: the provider's (asProviderError), or RequestOutcomeUnknown when
 * the request may have reached the server and its answer was lost (the connection closed under
 * the call, or its answer stream ended without it).
 */
function asCallError(err: unknown, session: Session): unknown {
  if (err instanceof McpError && err.data === LOST_ANSWER) {
    return new RequestOutcomeUnknown('the upstream MCP server ended its answer before the result');
  }
  if (err instanceof McpError && err.code === ErrorCode.ConnectionClosed && session.closed) {
    return new RequestOutcomeUnknown('the connection to the upstream MCP server closed during the call');
  }
  return asProviderError(err, session.challenge);
}

/** Marks the error answer Switchboard gives a request whose answer was lost (never a server's: it is not JSON). */
const LOST_ANSWER = Object.freeze({ lost: true });

/** Answers the session's pending request `id` with the lost-answer error, through the SDK's own plumbing. */
function answerLost(session: Session, id: string | number): void {
  session.transport.onmessage?.({
    jsonrpc: '2.0',
    id,
    error: { code: ErrorCode.InternalError, message: 'the answer was lost', data: LOST_ANSWER },
  });
}
