import { afterAll, inject } from 'vitest';
import { closeCaptureBrowser } from '../../surfaces/portal/cookie-capture/capture-sessions.js';
import { type Infra, type Stack, type StackOptions, startStackOn } from './stack.js';
import { startWorldOn, type World, type WorldOptions } from './world.js';

export * from './stack.js';
export * from './world.js';

/** The Temporal server, database and workflow bundle of this test run (see global-setup.ts). */
export function testInfra(): Infra {
  return {
    temporalAddress: inject('temporalAddress'),
    databaseUrl: inject('testDatabaseUrl'),
    workflowBundlePath: inject('workflowBundlePath'),
    processes: inject('stackProcesses'),
  };
}

/** A whole Switchboard for one test file, on the Temporal server and database of this run. */
export function startStack(options: StackOptions = {}): Promise<Stack> {
  return startStackOn(testInfra(), options);
}

/** The world of one test file, on this run's Temporal server and database, stopped after the file's tests. */
export async function startWorld(options: WorldOptions = {}): Promise<World> {
  const world = await startWorldOn(testInfra(), options);
  afterAll(() => world.stop());
  return world;
}

/**
 * The world of a file that plays connection flows in a browser: OAuth clients for GitHub and Jira,
 * the fake APIs, the Hacker News look-alike (cookie capture), attempts that outlive every test
 * (no workflow timer expires one mid-test), and the capture browser closed with the world.
 */
export async function startConnectFlowsWorld(): Promise<World> {
  const world = await startWorld({ clients: { github: {}, jira: {} }, apis: true, hackernews: true, env: { CONNECTION_TTL_SEC: '600' } });
  world.onStop(closeCaptureBrowser);
  return world;
}
