import { randomBytes } from 'node:crypto';
import type { RequestListener } from 'node:http';
import type { Browser } from 'playwright-core';
import { launchBrowser } from './browser.js';
import { type FakeApis, startFakeApis } from './fake-apis.js';
import { connectGithubAccount, type GithubAccountOptions } from './github-account.js';
import { type HnSite, startHnSite } from './hn-site.js';
import { type LocalServer, startLocalServer } from './local-server.js';
import { type OAuthClientSpec, startAuthServer, type TestAuthServer } from './oauth-server.js';
import { freePort } from './ports.js';
import { createTestUser, type Infra, type Stack, type StackOptions, startStackOn, type TestUser } from './stack.js';
import { Teardown } from './teardown.js';

/**
 * One world for integration tests and benchmarks alike (no vitest here: harness.ts runs it on a
 * test run's Temporal server and database, bench/lib/bench-stack.ts on a benchmark's): a real
 * OAuth authorization server holding Switchboard's clients, the fake service APIs, the Hacker
 * News look-alike, a whole Switchboard configured for all of them, users, and chromium on demand.
 * `stop()` takes it all down again, the last thing started first.
 */

/** The OAuth clients a world can register, by the name tests use: where Switchboard reads each and where its flow ends. */
const CLIENTS = {
  github: { prefix: 'GITHUB', callback: '/oauth/callback' },
  jira: { prefix: 'ATLASSIAN_JIRA', callback: '/oauth/callback' },
  slack: { prefix: 'SLACK', callback: '/oauth/callback' },
  /** Portal sign-in through OpenID Connect. */
  portal: { prefix: 'PORTAL_OIDC', callback: '/portal/oidc/callback' },
} as const;

export type ClientName = keyof typeof CLIENTS;

export interface WorldOptions {
  /**
   * Clients at the authorization server, each given to Switchboard. What a spec leaves out gets a
   * default: id `<name>-client`, a random secret, and this world's own callback as redirect URI.
   */
  clients?: Partial<Record<ClientName, Partial<OAuthClientSpec>>>;
  accessTokenTtlSec?: number;
  /** The fake service APIs, accepting the authorization server's tokens; Switchboard's GitHub and Linear call them. */
  apis?: boolean;
  /**
   * The Hacker News look-alike as cookie capture's service: `routes` adds pages of the test's own,
   * `loginPath` is where capture opens (default its login form).
   */
  hackernews?: boolean | (Parameters<typeof startHnSite>[0] & { loginPath?: string });
  /** Switchboard itself (default true); without it a world is the authorization server and fake APIs alone. */
  stack?: boolean;
  /** Start Switchboard's worker in this process (default true). */
  worker?: boolean;
  /** More environment for Switchboard, over what the world sets. */
  env?: Record<string, string>;
  /** Extra command-line flags for the world's chromium. */
  browserArgs?: string[];
  /** Switchboard serves the demo integration, as `npm start` does. */
  demo?: StackOptions['demo'];
}

export interface World {
  auth: TestAuthServer;
  apis: FakeApis;
  site: HnSite;
  stack: Stack;
  /** Every client at the authorization server, defaults filled in. */
  clients: Partial<Record<ClientName, OAuthClientSpec>>;
  /** The environment the world gives every Switchboard it starts (clients, fake API and site URLs, `env`). */
  env: Record<string, string>;
  /** A new user with an API key, in a tenant of their own unless `tenantId` says whose. */
  user(input?: Parameters<typeof createTestUser>[1]): Promise<TestUser>;
  /** Stores a GitHub account for `user` with tokens the authorization server really issued (on `stack`, the world's by default). */
  connectGithub(user: TestUser, login: string, options?: GithubAccountOptions & { stack?: Stack }): ReturnType<typeof connectGithubAccount>;
  /** An access token the authorization server issued `login` through client `name`, without a browser. */
  accessToken(name: ClientName, login: string): Promise<string>;
  /** A new user whose GitHub account is connected as `login`. */
  githubUser(login: string): Promise<TestUser>;
  /** Chromium, launched on the first call. */
  browser(): Promise<Browser>;
  /** One more Switchboard with the world's environment (and `env` over it), stopped with the world. */
  startStack(options?: StackOptions): Promise<Stack>;
  /** A plain HTTP server of the test's own, stopped with the world. */
  serve(handler: RequestListener): Promise<LocalServer>;
  /** A clean-up step of the test's own; steps run before the world's own, the last added first. */
  onStop(step: () => unknown): void;
  stop(): Promise<void>;
}

export async function startWorldOn(infra: Infra, options: WorldOptions = {}): Promise<World> {
  const teardown = new Teardown();
  try {
    return await assemble(infra, options, teardown);
  } catch (err) {
    await teardown.run().catch(() => {});
    throw err;
  }
}

/** The parts Switchboard is pointed at, and the environment that points it there. */
interface Parts {
  clients: Partial<Record<ClientName, OAuthClientSpec>>;
  auth?: TestAuthServer;
  apis?: FakeApis;
  site?: HnSite;
  env: Record<string, string>;
}

async function startParts(options: WorldOptions, switchboardUrl: string, teardown: Teardown): Promise<Parts> {
  const clients = fillInClients(options.clients ?? {}, switchboardUrl);
  const parts: Parts = { clients, env: {} };
  if (Object.keys(clients).length > 0 || options.apis) {
    const auth = await startAuthServer(Object.values(clients), { accessTokenTtlSec: options.accessTokenTtlSec });
    teardown.add(auth.close);
    parts.auth = auth;
    for (const [name, client] of Object.entries(clients)) Object.assign(parts.env, clientEnv(auth, name as ClientName, client));
    if (options.apis) {
      const apis = await startFakeApis((token) => auth.subjectOf(token));
      teardown.add(apis.close);
      parts.apis = apis;
      Object.assign(parts.env, { GITHUB_API_BASE_URL: `${apis.baseUrl}/github`, LINEAR_API_BASE_URL: `${apis.baseUrl}/linear` });
    }
  }
  if (options.hackernews) {
    const { loginPath = '/login?goto=news', ...siteOptions } = options.hackernews === true ? {} : options.hackernews;
    const site = await startHnSite(siteOptions);
    teardown.add(site.close);
    parts.site = site;
    Object.assign(parts.env, { HACKERNEWS_LOGIN_URL: `${site.url}${loginPath}`, HACKERNEWS_API_BASE_URL: site.url });
  }
  Object.assign(parts.env, options.env);
  return parts;
}

async function assemble(infra: Infra, options: WorldOptions, teardown: Teardown): Promise<World> {
  // Chosen before anything starts: the clients' redirect URIs name Switchboard's address.
  const port = await freePort();
  const { clients, auth, apis, site, env } = await startParts(options, `http://127.0.0.1:${port}`, teardown);

  const startStack = async (more: StackOptions = {}) => {
    const started = await startStackOn(infra, { ...more, env: { ...env, ...more.env } });
    teardown.add(() => started.close());
    return started;
  };
  const stack =
    options.stack === false ? undefined : await startStack({ env: { PORT: String(port) }, worker: options.worker, demo: options.demo });

  let browser: Promise<Browser> | undefined;
  const world: World = {
    get auth() {
      return present(auth, 'authorization server: give it clients or apis');
    },
    get apis() {
      return present(apis, 'fake APIs: ask for apis');
    },
    get site() {
      return present(site, 'Hacker News site: ask for hackernews');
    },
    get stack() {
      return present(stack, 'Switchboard: it was started with stack: false');
    },
    clients,
    env,
    user: (input) => createTestUser(world.stack, input),
    connectGithub: (user, login, { stack: on = world.stack, ...account } = {}) =>
      connectGithubAccount(on, world.auth, present(clients.github, 'GitHub client').clientId, user, login, account),
    accessToken: (name, login) => world.auth.issueAccessToken(login, present(clients[name], `${name} client`).clientId),
    async githubUser(login) {
      const user = await world.user();
      await world.connectGithub(user, login);
      return user;
    },
    browser() {
      browser ??= launchBrowser(options.browserArgs).then((launched) => {
        teardown.add(() => launched.close());
        return launched;
      });
      return browser;
    },
    startStack,
    async serve(handler) {
      const server = await startLocalServer(handler);
      teardown.add(server.close);
      return server;
    },
    onStop: (step) => teardown.add(step),
    stop: () => teardown.run(),
  };
  return world;
}

function fillInClients(specs: NonNullable<WorldOptions['clients']>, switchboardUrl: string) {
  const clients: Partial<Record<ClientName, OAuthClientSpec>> = {};
  for (const [name, spec] of Object.entries(specs) as [ClientName, Partial<OAuthClientSpec>][]) {
    clients[name] = {
      clientId: `${name}-client`,
      clientSecret: `${name}-secret-${randomBytes(8).toString('hex')}`,
      redirectUris: [`${switchboardUrl}${CLIENTS[name].callback}`],
      ...spec,
    };
  }
  return clients;
}

/** Where Switchboard reads this client: a provider's id, secret and endpoints, or the portal's OIDC settings. */
function clientEnv(auth: TestAuthServer, name: ClientName, client: OAuthClientSpec): Record<string, string> {
  if (name === 'portal') {
    return { PORTAL_OIDC_ISSUER: auth.issuer, PORTAL_OIDC_CLIENT_ID: client.clientId, PORTAL_OIDC_CLIENT_SECRET: client.clientSecret };
  }
  return auth.envFor(CLIENTS[name].prefix, client);
}

function present<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`This world has no ${what}`);
  return value;
}
