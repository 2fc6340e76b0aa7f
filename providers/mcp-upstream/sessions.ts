import { createHash } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { UpstreamEntry } from '../../core/upstream-entry.js';
import { ProviderHttpError } from '../http.js';
import type { Credential } from '../sdk.js';

/** Most upstream sessions one process keeps open per server; the least recently opened closes first. */
const MAX_SESSIONS = 200;
/** The SDK's own request timeout is replaced by the caller's deadline signal. */
const NO_SDK_TIMEOUT_MS = 24 * 60 * 60 * 1000;

/** Who a session (and a tool list) belongs to: `shared` without a credential, else a hash of it. */
export function credentialKey(credential: Credential): string {
  if (credential.type === 'none') return 'shared';
  return createHash('sha256').update(JSON.stringify(credential)).digest('base64url').slice(0, 32);
}

/** The headers a credential puts on every request to the upstream (the key in its configured header). */
export function credentialHeaders(entry: UpstreamEntry, credential: Credential): Record<string, string> {
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
  if (err instanceof McpError) return new Error(`the upstream MCP server answered error ${err.code}: ${err.message}`);
  return err;
}

interface Session {
  client: Promise<Client>;
  transport?: StreamableHTTPClientTransport | SSEClientTransport;
  /** The last `WWW-Authenticate` a 401/403 of this session carried (the SDK's errors drop headers). */
  challenge?: string;
}

/**
 * Open MCP client sessions to one upstream server, one per credential, reused across calls (the
 * server's `Mcp-Session-Id` is kept). Streamable HTTP first; if the server refuses it the way a
 * legacy server does (400/404/405 on the first POST), the HTTP+SSE transport.
 */
export class UpstreamSessions {
  private readonly sessions = new Map<string, Session>();

  constructor(
    private readonly entry: UpstreamEntry,
    private readonly fetch: FetchLike,
    private readonly version: string,
    /** A server said its tools changed (notifications/tools/list_changed) on this key's session. */
    private readonly onToolsChanged: (key: string) => void,
  ) {}

  /**
   * Runs `fn` on the credential's session. A session the server dropped (HTTP 404 on the session
   * id, which the spec makes the answer to a request the server did not take) is opened again and
   * `fn` runs once more: the first request never reached a tool. Nothing else is retried.
   */
  async run<T>(credential: Credential, signal: AbortSignal, fn: (client: Client) => Promise<T>): Promise<T> {
    const key = credentialKey(credential);
    const session = await this.session(key, credential, signal);
    const client = await session.client;
    try {
      return await fn(client);
    } catch (err) {
      const hadSession = session.transport instanceof StreamableHTTPClientTransport && Boolean(session.transport.sessionId);
      if (!(err instanceof StreamableHTTPError && err.code === 404 && hadSession)) throw asProviderError(err, session.challenge);
      this.forget(key, client);
      const fresh = await this.session(key, credential, signal);
      try {
        return await fn(await fresh.client);
      } catch (again) {
        throw asProviderError(again, fresh.challenge);
      }
    }
  }

  /** Request options for the SDK: the caller's deadline, not the SDK's 60 s default. */
  static options(signal: AbortSignal) {
    return { signal, timeout: NO_SDK_TIMEOUT_MS };
  }

  async closeAll(): Promise<void> {
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(all.map((s) => s.client.then((c) => c.close()).catch(() => {})));
  }

  private forget(key: string, client: Client): void {
    this.sessions.delete(key);
    void client.close().catch(() => {});
  }

  /** The credential's session, opened on first use; a failed opening is forgotten (the next call tries again). */
  private async session(key: string, credential: Credential, signal: AbortSignal): Promise<Session> {
    let session = this.sessions.get(key);
    if (!session) {
      const holder: Session = { client: Promise.resolve(undefined as unknown as Client) };
      holder.client = this.open(key, credentialHeaders(this.entry, credential), signal, holder);
      holder.client.catch(() => {
        if (this.sessions.get(key) === holder) this.sessions.delete(key);
      });
      this.sessions.set(key, holder);
      session = holder;
      if (this.sessions.size > MAX_SESSIONS) {
        const [oldestKey, oldest] = this.sessions.entries().next().value!;
        this.sessions.delete(oldestKey);
        void oldest.client.then((c) => c.close()).catch(() => {});
      }
    }
    try {
      await session.client;
      return session;
    } catch (err) {
      throw asProviderError(err, session.challenge);
    }
  }

  private async open(key: string, headers: Record<string, string>, signal: AbortSignal, session: Session): Promise<Client> {
    const url = new URL(this.entry.url);
    const client = this.newClient(key);
    // Every answer of this session passes here: a 401/403's challenge is kept for the error it becomes.
    const fetch: FetchLike = async (input, init) => {
      const res = await this.fetch(input, init);
      if (res.status === 401 || res.status === 403) session.challenge = res.headers.get('www-authenticate') ?? undefined;
      return res;
    };
    const streamable = new StreamableHTTPClientTransport(url, {
      fetch,
      requestInit: { headers },
      redirectPolicy: 'same-origin',
    });
    try {
      await client.connect(streamable, UpstreamSessions.options(signal));
      session.transport = streamable;
      return client;
    } catch (err) {
      await client.close().catch(() => {});
      const legacy = err instanceof StreamableHTTPError && (err.code === 400 || err.code === 404 || err.code === 405);
      if (!legacy) throw err;
    }
    const fallback = this.newClient(key);
    const sse = new SSEClientTransport(url, {
      fetch,
      requestInit: { headers },
      eventSourceInit: {
        fetch: (u, init) => fetch(u, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } }),
      },
    });
    await fallback.connect(sse, UpstreamSessions.options(signal));
    session.transport = sse;
    return fallback;
  }

  private newClient(key: string): Client {
    const client = new Client({ name: 'switchboard', version: this.version }, { capabilities: {} });
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => this.onToolsChanged(key));
    client.onclose = () => {
      const current = this.sessions.get(key);
      if (current)
        void current.client.then((c) => c === client && this.sessions.get(key) === current && this.sessions.delete(key)).catch(() => {});
    };
    return client;
  }
}
