/**
 * A request's answer can come as an event stream on the POST that carried it (Streamable HTTP).
 * If that stream ends, cleanly or not, before the answer and without an event id (so it cannot be
 * resumed), the answer is lost; the SDK would wait for it until the caller's deadline. This sees
 * it end, so the call is answered at once as lost (outcome unknown), not as a timeout much later.
 */

/** The JSON-RPC id of the request a POST body carries, if it is one (not a notification or a response). */
function requestIdOf(init: RequestInit | undefined): string | number | undefined {
  if ((init?.method ?? 'GET').toUpperCase() !== 'POST' || typeof init?.body !== 'string') return undefined;
  try {
    const message = JSON.parse(init.body) as { id?: unknown; method?: unknown };
    const id = message?.id;
    return typeof message?.method === 'string' && (typeof id === 'string' || typeof id === 'number') ? id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Reads server-sent events as they pass, only as far as needed: whether an event carried an id
 * (the stream can be resumed) and whether one carried the answer to request `id`.
 */
class EventScan {
  resumable = false;
  answered = false;
  private line = '';
  private data: string[] = [];
  private readonly decoder = new TextDecoder();

  constructor(private readonly id: string | number) {}

  push(chunk: Uint8Array): void {
    if (this.answered) return;
    const text = this.line + this.decoder.decode(chunk, { stream: true });
    const lines = text.split(/\r\n|\r|\n/);
    this.line = lines.pop() ?? '';
    for (const line of lines) this.take(line);
  }

  private take(line: string): void {
    if (line === '') {
      if (this.data.length) this.answered ||= this.isAnswer(this.data.join('\n'));
      this.data = [];
    } else if (line.startsWith('data:')) this.data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
    else if (line.startsWith('id:') && line.length > 3) this.resumable = true;
  }

  private isAnswer(data: string): boolean {
    try {
      const message = JSON.parse(data) as { id?: unknown; result?: unknown; error?: unknown };
      return message?.id === this.id && (message.result !== undefined || message.error !== undefined);
    } catch {
      return false;
    }
  }
}

/**
 * The response as it came, watched: when it is the event stream answering a request and it ends
 * (or breaks) without that request's answer and cannot be resumed, `onLost(id)` is called.
 */
export function watchForLostAnswer(init: RequestInit | undefined, res: Response, onLost: (id: string | number) => void): Response {
  const id = res.ok && res.body && /^text\/event-stream/i.test(res.headers.get('content-type') ?? '') ? requestIdOf(init) : undefined;
  if (id === undefined || !res.body) return res;
  const scan = new EventScan(id);
  const reader = res.body.getReader();
  const ended = () => {
    if (!scan.answered && !scan.resumable) onLost(id);
  };
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      let read: ReadableStreamReadResult<Uint8Array>;
      try {
        read = await reader.read();
      } catch (err) {
        controller.error(err);
        ended();
        return;
      }
      if (read.done) {
        controller.close();
        ended();
        return;
      }
      scan.push(read.value);
      controller.enqueue(read.value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
  const watched = new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  Object.defineProperty(watched, 'url', { value: res.url });
  return watched;
}
