import { type FakeApis, startFakeApis } from '../../test/support/fake-apis.js';
import { connectGithubAccount } from '../../test/support/github-account.js';
import { startAuthServer, type TestAuthServer } from '../../test/support/oauth-server.js';
import { createTestUser, type Stack, startStackOn, type TestUser } from '../../test/support/stack.js';
import { withTimeout } from './deadline.js';
import { startBenchEnvironment } from './environment.js';

/**
 * One whole Switchboard for a benchmark, on the bench environment: optionally GitHub pointed at
 * the fake APIs (a real OAuth server's tokens, an account connected without a browser), one user
 * with an API key, and a signal that aborts on the deadline, Ctrl-C or the first failure.
 * Everything is stopped again however `body` ends.
 */

const GITHUB_CLIENT = { clientId: 'bench-gh', clientSecret: 'bench-gh-secret-0123456789', redirectUris: ['http://127.0.0.1/cb'] };
/** Far past any run, so no call pays for a token refresh. */
const TOKEN_TTL_SEC = 12 * 3600;
/** Closing the stack waits on the worker's shutdown, which never ends if Temporal died. */
const CLOSE_TIMEOUT_MS = 30_000;
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
  stack: Stack;
  user: TestUser;
  github?: FakeGithub;
  signal: AbortSignal;
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
}

export async function withBenchStack<T>(options: BenchStackOptions, body: (run: BenchRun) => Promise<T>): Promise<T> {
  const environment = await startBenchEnvironment();
  const failed = new AbortController();
  const signal = AbortSignal.any([AbortSignal.timeout(options.timeoutSec * 1000), environment.interrupted, failed.signal]);
  let auth: TestAuthServer | undefined;
  let apis: FakeApis | undefined;
  let stack: Stack | undefined;
  try {
    const env: Record<string, string> = {
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_MINUTE: '1000000',
      RATE_LIMIT_CALLS_PER_MINUTE: '100000000',
      TENANT_RATE_LIMIT_CALLS_PER_MINUTE: '100000000',
      ...options.env,
    };
    if (options.github) {
      auth = await startAuthServer([GITHUB_CLIENT], { accessTokenTtlSec: TOKEN_TTL_SEC });
      const tokenAuth = auth;
      apis = await startFakeApis((token) => tokenAuth.subjectOf(token));
      Object.assign(env, auth.envFor('GITHUB', GITHUB_CLIENT), { GITHUB_API_BASE_URL: `${apis.baseUrl}/github` });
    }
    stack = await startStackOn(environment.infra, { env, worker: options.worker ?? true });
    // Otherwise a worker failing mid-run is an unhandled rejection that ends the process before cleanup.
    stack.workerRun?.catch(() => {});
    const user = await createTestUser(stack);
    const github = auth && apis ? await connectGithub(stack, user, auth, apis) : undefined;
    return await body({ stack, user, github, signal });
  } catch (err) {
    const abortedBy = signal.aborted ? signal.reason : undefined;
    failed.abort();
    if (abortedBy instanceof DOMException && abortedBy.name === 'TimeoutError') {
      throw new Error(`${options.name} did not finish within ${options.timeoutSec} s (BENCH_TIMEOUT_SEC)`, { cause: err });
    }
    if (abortedBy === environment.interrupted.reason) throw abortedBy;
    if (stack) process.stderr.write(`last log lines of the stack:\n${stack.logs.lines.slice(-20).join('')}`);
    throw err;
  } finally {
    if (stack) await closeStack(stack);
    await apis?.close();
    await auth?.close();
    await environment.teardown();
  }
}

/** Stores a GitHub account for `user` whose tokens the auth server really issued. */
async function connectGithub(stack: Stack, user: TestUser, auth: TestAuthServer, apis: FakeApis): Promise<FakeGithub> {
  const { tokens } = await connectGithubAccount(stack, auth, GITHUB_CLIENT.clientId, user, GITHUB_LOGIN, { validForSec: TOKEN_TTL_SEC });
  return { apis, auth, accessToken: tokens.accessToken, apiBaseUrl: `${apis.baseUrl}/github` };
}

/**
 * Closes the stack, bounded in time, reporting rather than throwing so the rest of the teardown
 * still runs. After Ctrl-C the worker may already have stopped by itself; shutting it down again throws.
 */
export async function closeStack(stack: Stack): Promise<void> {
  const close = async () => {
    if (stack.worker && stack.worker.getState() !== 'RUNNING') {
      await stack.workerRun?.catch(() => {});
      stack.worker = undefined;
    }
    await stack.close();
  };
  await withTimeout(close(), CLOSE_TIMEOUT_MS, 'closing the stack').catch((err: Error) => process.stderr.write(`${err.message}\n`));
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
