import type { FakeApis } from '../../test/support/fake-apis.js';
import type { TestAuthServer } from '../../test/support/oauth-server.js';
import type { Stack, TestUser } from '../../test/support/stack.js';
import { startWorldOn, type World, type WorldOptions } from '../../test/support/world.js';
import { withTimeout } from './deadline.js';
import { startBenchEnvironment } from './environment.js';
import type { TemporalServerKind } from './temporal-servers.js';

/**
 * The test world (test/support/world.ts) for one benchmark, on the bench environment: one user
 * with an API key, optionally GitHub pointed at the fake APIs with that user's account connected
 * (a real OAuth server's tokens, no browser), and a signal that aborts on the deadline, Ctrl-C or
 * the first failure. Everything is stopped again however `body` ends.
 */

const GITHUB_CLIENT = { clientId: 'bench-gh', clientSecret: 'bench-gh-secret-0123456789' };
/** Far past any run, so no call pays for a token refresh. */
const TOKEN_TTL_SEC = 12 * 3600;
/** Stopping the world waits on the worker's shutdown, which never ends if Temporal died. */
const STOP_TIMEOUT_MS = 30_000;
export const GITHUB_LOGIN = 'bench-octocat';

export interface FakeGithub {
  apis: FakeApis;
  auth: TestAuthServer;
  /** The connected account's access token, for requests straight to the fake API. */
  accessToken: string;
  /** `{fake}/github`, where Switchboard's GitHub tools send their requests. */
  apiBaseUrl: string;
}

export interface BenchRun {
  world: World;
  stack: Stack;
  user: TestUser;
  github?: FakeGithub;
  signal: AbortSignal;
  /** The Temporal server's process id. */
  temporalPid: number;
}

export interface BenchStackOptions {
  name: string;
  timeoutSec: number;
  /** Start the auth server and fake APIs and connect the user's GitHub account. */
  github: boolean;
  /** Start Switchboard's worker (default true); HTTP-only benchmarks do without. */
  worker?: boolean;
  /** More environment for Switchboard (an OAuth client of the benchmark's own, say). */
  env?: Record<string, string>;
  /** More of the world: OAuth clients of the benchmark's own, the fake APIs. */
  world?: Pick<WorldOptions, 'clients' | 'apis'>;
  /** The Temporal server to run on (default the dev server). */
  temporal?: TemporalServerKind;
}

export async function withBenchStack<T>(options: BenchStackOptions, body: (run: BenchRun) => Promise<T>): Promise<T> {
  const environment = await startBenchEnvironment({ temporal: options.temporal });
  const failed = new AbortController();
  const signal = AbortSignal.any([AbortSignal.timeout(options.timeoutSec * 1000), environment.interrupted, failed.signal]);
  let world: World | undefined;
  try {
    world = await startWorldOn(environment.infra, {
      ...(options.github && { clients: { github: GITHUB_CLIENT }, apis: true, accessTokenTtlSec: TOKEN_TTL_SEC }),
      ...options.world,
      worker: options.worker ?? true,
      env: {
        LOG_LEVEL: 'warn',
        RATE_LIMIT_PER_MINUTE: '1000000',
        RATE_LIMIT_CALLS_PER_MINUTE: '100000000',
        TENANT_RATE_LIMIT_CALLS_PER_MINUTE: '100000000',
        ...options.env,
      },
    });
    const { stack } = world;
    // Otherwise a worker failing mid-run is an unhandled rejection that ends the process before cleanup.
    stack.workerRun?.catch(() => {});
    const user = await world.user();
    const github = options.github ? await connectGithub(world, user) : undefined;
    return await body({ world, stack, user, github, signal, temporalPid: environment.temporalPid });
  } catch (err) {
    const abortedBy = signal.aborted ? signal.reason : undefined;
    failed.abort();
    if (abortedBy instanceof DOMException && abortedBy.name === 'TimeoutError') {
      throw new Error(`${options.name} did not finish within ${options.timeoutSec} s (BENCH_TIMEOUT_SEC)`, { cause: err });
    }
    if (abortedBy === environment.interrupted.reason) throw abortedBy;
    if (world) process.stderr.write(`last log lines of the stack:\n${world.stack.logs.lines.slice(-20).join('')}`);
    throw err;
  } finally {
    // Reported rather than thrown, so the environment's teardown still runs.
    if (world)
      await withTimeout(world.stop(), STOP_TIMEOUT_MS, 'stopping the world').catch((err: Error) =>
        process.stderr.write(`${err.message}\n`),
      );
    await environment.teardown();
  }
}

/**
 * A bench stack on each of `servers` at once (each its own Temporal server and Switchboard), for
 * sides that alternate across servers round by round; all stopped again however `body` ends.
 */
export function withBenchStacksOn<T>(
  servers: readonly TemporalServerKind[],
  options: Omit<BenchStackOptions, 'temporal'>,
  body: (runs: { server: TemporalServerKind; run: BenchRun }[]) => Promise<T>,
): Promise<T> {
  const open = (i: number, runs: { server: TemporalServerKind; run: BenchRun }[]): Promise<T> =>
    i === servers.length
      ? body(runs)
      : withBenchStack({ ...options, temporal: servers[i] }, (run) => open(i + 1, [...runs, { server: servers[i], run }]));
  return open(0, []);
}

/** Stores a GitHub account for `user` whose tokens the auth server really issued. */
async function connectGithub(world: World, user: TestUser): Promise<FakeGithub> {
  const { tokens } = await world.connectGithub(user, GITHUB_LOGIN, { validForSec: TOKEN_TTL_SEC });
  const { apis, auth } = world;
  return { apis, auth, accessToken: tokens.accessToken, apiBaseUrl: `${apis.baseUrl}/github` };
}

/**
 * GET /user straight to the fake GitHub API, with the headers Switchboard's GitHub tool sends:
 * the baseline every execute benchmark compares against. A signal of its own per request: undici
 * leaves a listener on the signal it is given until the request is garbage-collected.
 */
export async function getUserDirectly(github: FakeGithub, signal: AbortSignal): Promise<void> {
  const res = await fetch(`${github.apiBaseUrl}/user`, {
    headers: {
      authorization: `Bearer ${github.accessToken}`,
      accept: 'application/vnd.github+json',
      'x-github-api-version': '2022-11-28',
      'user-agent': 'switchboard',
    },
    signal: AbortSignal.any([signal]),
  });
  const body = await res.json();
  if (res.status !== 200 || body.login !== GITHUB_LOGIN) throw new Error(`fake GitHub answered ${res.status}: ${JSON.stringify(body)}`);
}
