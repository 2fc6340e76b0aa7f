import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

/**
 * A hostile upstream MCP server in a process of its own (hostile-upstream-main.ts), so the
 * attacker's own work (building and sending megabytes of tool lists) is not counted against the
 * Switchboard it attacks. It lists `tools` tools whose input schemas are each about `schemaBytes`
 * of JSON (under the 64 KB per-schema limit), every field `format: "url"`; answers every call of
 * them after `callMs`; and while told to attack, sends notifications/tools/list_changed to every
 * open session every `announceMs`, so each search of its tenant lists it again.
 */
export interface HostileUpstreamOptions {
  tools: number;
  schemaBytes: number;
  /** Tools per tools/list page: a whole listing is more than one response may carry. */
  pageSize: number;
  callMs: number;
  announceMs: number;
}

/** What the server saw while it attacked (reported when told to stop). */
export interface HostileUpstreamCounts {
  /** notifications/tools/list_changed sent (one per open session per announcement). */
  announced: number;
  /** tools/list requests answered (pages). */
  listPages: number;
  /** Tool calls that reached a tool. */
  calls: number;
}

export interface HostileUpstream {
  url: string;
  /** Starts announcing tool-list changes. */
  attack(): void;
  /** Stops announcing; answers what was seen since `attack`. */
  quiet(): Promise<HostileUpstreamCounts>;
  close(): Promise<void>;
}

/** The name of hostile tool `i` at the upstream, and the argument every one of its schemas formats as a URL. */
export const hostileToolName = (i: number) => `tool_${i}`;
export const HOSTILE_URL_FIELD = 'link';

/**
 * An object schema of about `bytes` of JSON: `link` and as many more string fields as fit, each
 * `format: "url"` (ajv-formats' `url` expression backtracks, and every formatted field is code
 * ajv generates when it compiles the schema).
 */
export function hostileSchema(i: number, bytes: number): Record<string, unknown> {
  const properties: Record<string, unknown> = { [HOSTILE_URL_FIELD]: { type: 'string', format: 'url', description: 'Where to go' } };
  const schema = { type: 'object', properties, required: [HOSTILE_URL_FIELD] };
  const field = { type: 'string', format: 'url', description: 'Another link to follow' };
  const perField = JSON.stringify({ [`f${i}_0000`]: field }).length;
  const fields = Math.max(0, Math.floor((bytes - JSON.stringify(schema).length) / perField));
  for (let f = 0; f < fields; f++) properties[`f${i}_${String(f).padStart(4, '0')}`] = field;
  return schema;
}

const STARTUP_TIMEOUT_MS = 60_000;

/**
 * The niceness the world's remote parts run at: the hostile upstream's process and the attacker's
 * thread stand for machines of their own, yet share this machine's two cores with Switchboard, so at
 * the default priority their own work (serving 1.5 MB pages, sending and reading hundreds of requests)
 * would be counted as harm Switchboard did to tenant B. At 19 they run on what Switchboard leaves;
 * the attack's counts (searches, calls, keys posted) are printed to show it kept its pace.
 * `HOSTILE_REMOTE_NICE=0` runs them as equals.
 */
export function remoteNice(): number {
  const raw = process.env.HOSTILE_REMOTE_NICE;
  if (raw === undefined || raw === '') return 19;
  const nice = Number(raw);
  if (!Number.isInteger(nice) || nice < 0 || nice > 19) throw new Error(`HOSTILE_REMOTE_NICE must be an integer from 0 to 19, not ${raw}`);
  return nice;
}

export async function startHostileUpstream(options: HostileUpstreamOptions): Promise<HostileUpstream> {
  const entry = new URL('./hostile-upstream-main.ts', import.meta.url).pathname;
  // `nice` (coreutils) sets every thread's priority, the ones Node starts before any code of ours runs too.
  const child: ChildProcess = spawn('nice', ['-n', String(remoteNice()), process.execPath, '--import', 'tsx', entry], {
    cwd: new URL('../..', import.meta.url).pathname,
    env: { PATH: process.env.PATH, HOSTILE_UPSTREAM: JSON.stringify(options) },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-2000);
  });
  const waiting: ((line: Record<string, unknown>) => void)[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    let answer: Record<string, unknown>;
    try {
      answer = JSON.parse(line);
    } catch {
      return; // Not one of its answers.
    }
    waiting.shift()?.(answer);
  });
  const nextLine = () => new Promise<Record<string, unknown>>((resolve) => waiting.push(resolve));
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code, signal) => reject(new Error(`the hostile upstream exited (${code ?? signal}): ${stderr}`))),
  );
  exited.catch(() => {});
  let timer: NodeJS.Timeout | undefined;
  const started = await Promise.race([
    nextLine(),
    exited,
    new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`the hostile upstream did not start within ${STARTUP_TIMEOUT_MS} ms: ${stderr}`)),
        STARTUP_TIMEOUT_MS,
      );
    }),
  ]).finally(() => clearTimeout(timer));
  const send = (command: string) => child.stdin?.write(`${command}\n`);
  return {
    url: String(started.url),
    attack: () => send('attack'),
    async quiet() {
      const answer = nextLine();
      send('quiet');
      return (await Promise.race([answer, exited])) as unknown as HostileUpstreamCounts;
    },
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await gone;
    },
  };
}
