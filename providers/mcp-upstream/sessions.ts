import { createHash } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { ProviderHttpError } from '../http.js';
import type { Credential } from '../sdk.js';
import type { UpstreamEntry } from './entry.js';

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

/** The upstream's answer as Switchboard's provider errors: a 401/403 is the credential's, others the server's. */
function asProviderError(err: unknown): unknown {
  if (err instanceof StreamableHTTPError && typeof err.code === 'number' && err.code >= 400) {
    return new ProviderHttpError(err.code, err.message.replace(/^Streamable HTTP error: /, ''));
  }
  if (err instanceof McpError) return new Error(`the upstream MCP server answered error ${err.code}: ${err.message}`);
  return err;
}

/**
 * Open MCP client sessions to one upstream server, one per credential, reused across calls (the
 * server's `Mcp-Session-Id` is kept). Streamable HTTP first; if the server refuses it the way a
 * legacy server does (400/404/405 on the first POST), the HTTP+SSE transport.
 */
export class UpstreamSessions {
  private readonly sessions = new Map<
    string,
    { client: Promise<Client>; transport?: StreamableHTTPClientTransport | SSEClientTransport }
  >();

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
    try {
      return await fn(session.client);
    } catch (err) {
      const hadSession = session.transport instanceof StreamableHTTPClientTransport && Boolean(session.transport.sessionId);
      if (!(err instanceof StreamableHTTPError && err.code === 404 && hadSession)) throw asProviderError(err);
      this.forget(key, session.client);
      const fresh = await this.session(key, credential, signal);
      try {
        return await fn(fresh.client);
      } catch (again) {
        throw asProviderError(again);
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

  private async session(
    key: string,
    credential: Credential,
    signal: AbortSignal,
  ): Promise<{ client: Client; transport?: StreamableHTTPClientTransport | SSEClientTransport }> {
    let entry = this.sessions.get(key);
    if (!entry) {
      const holder: { client: Promise<Client>; transport?: StreamableHTTPClientTransport | SSEClientTransport } = {
        client: Promise.resolve(undefined as unknown as Client),
      };
      holder.client = this.open(key, credentialHeaders(this.entry, credential), signal, (t) => {
        holder.transport = t;
      });
      holder.client.catch(() => {
        if (this.sessions.get(key) === holder) this.sessions.delete(key);
      });
      this.sessions.set(key, holder);
      entry = holder;
      if (this.sessions.size > MAX_SESSIONS) {
        const [oldestKey, oldest] = this.sessions.entries().next().value!;
        this.sessions.delete(oldestKey);
        void oldest.client.then((c) => c.close()).catch(() => {});
      }
    }
    try {
      return { client: await entry.client, transport: entry.transport };
    } catch (err) {
      throw asProviderError(err);
    }
  }

  private async open(
    key: string,
    headers: Record<string, string>,
    signal: AbortSignal,
    keep: (t: StreamableHTTPClientTransport | SSEClientTransport) => void,
  ): Promise<Client> {
    const url = new URL(this.entry.url);
    const client = this.newClient(key);
    const streamable = new StreamableHTTPClientTransport(url, {
      fetch: this.fetch,
      requestInit: { headers },
      redirectPolicy: 'same-origin',
    });
    try {
      await client.connect(streamable, UpstreamSessions.options(signal));
      keep(streamable);
      return client;
    } catch (err) {
      await client.close().catch(() => {});
      const legacy = err instanceof StreamableHTTPError && (err.code === 400 || err.code === 404 || err.code === 405);
      if (!legacy) throw err;
    }
    const fallback = this.newClient(key);
    const sse = new SSEClientTransport(url, {
      fetch: this.fetch,
      requestInit: { headers },
      eventSourceInit: {
        fetch: (u, init) => this.fetch(u, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } }),
      },
    });
    await fallback.connect(sse, UpstreamSessions.options(signal));
    keep(sse);
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
