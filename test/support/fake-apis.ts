import { createServer, type Server } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import { createFakeGithub, type FakeGithub, githubUnauthorized } from './fake-apis/github.js';
import { createFakeJira, type FakeJira, jiraUnauthorized } from './fake-apis/jira.js';
import { createFakeLinear, type FakeLinear } from './fake-apis/linear.js';
import { createFakeSlack, type FakeSlack, slackUnauthorized } from './fake-apis/slack.js';
import { freePort } from './ports.js';

/**
 * Fake service APIs over real HTTP, speaking the real services' shapes: GitHub at `/github`,
 * Jira Cloud (Atlassian's API gateway) at `/jira`, the Slack Web API at `/slack`, Linear's GraphQL
 * API at `/linear`, each with in-memory state (see fake-apis/). They accept only access tokens the
 * test authorization server issued (checked against it) — Linear only the personal API keys a test
 * granted it — and can be told to answer 401, 429, 500, slowly or hugely.
 */

export interface FakeApis {
  baseUrl: string;
  /** Per-path behaviour overrides for the next requests. */
  behave: Map<string, { status?: number; delayMs?: number; body?: unknown; times?: number }>;
  requests: { method: string; path: string; subject?: string; contentType?: string }[];
  /** The most requests in flight at once since it was last reset to 0. */
  maxInFlight: number;
  /** Requests whose client hung up before the answer was sent (a deadline's abort reaching the wire). */
  abandoned: number;
  /** The services' in-memory state, to seed or inspect. */
  state: { github: FakeGithub; jira: FakeJira; slack: FakeSlack; linear: FakeLinear };
  close(): Promise<void>;
}

export async function startFakeApis(subjectOf: (token: string) => Promise<string | undefined>): Promise<FakeApis> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const app = express();
  app.use(express.json());
  app.use(express.urlencoded({ extended: false }));
  const behave: FakeApis['behave'] = new Map();
  const requests: FakeApis['requests'] = [];
  const state = {
    github: createFakeGithub(`${baseUrl}/github`),
    jira: createFakeJira(`${baseUrl}/jira`),
    slack: createFakeSlack(),
    linear: createFakeLinear(),
  };

  let inFlight = 0;
  const fake = { maxInFlight: 0, abandoned: 0 };
  app.use((_req: Request, res: Response, next: NextFunction) => {
    inFlight++;
    fake.maxInFlight = Math.max(fake.maxInFlight, inFlight);
    res.once('close', () => {
      inFlight--;
      if (!res.writableFinished) fake.abandoned++;
    });
    next();
  });

  app.use(async (req: Request, res: Response, next: NextFunction) => {
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const subject = token ? await subjectOf(token) : undefined;
    requests.push({ method: req.method, path: req.path, subject, contentType: req.headers['content-type'] });
    const override = behave.get(req.path);
    if (override) {
      if (override.times !== undefined && --override.times <= 0) behave.delete(req.path);
      if (override.delayMs) await new Promise((r) => setTimeout(r, override.delayMs));
      if (override.status) return res.status(override.status).json(override.body ?? { message: `status ${override.status}` });
    }
    // Linear checks its own personal API keys.
    if (req.path.startsWith('/linear/')) return next();
    if (!subject) {
      if (req.path.startsWith('/slack/')) return slackUnauthorized(res, Boolean(token));
      if (req.path.startsWith('/jira/')) return jiraUnauthorized(res);
      return githubUnauthorized(res);
    }
    res.locals.login = subject;
    next();
  });

  app.use('/github', state.github.router);
  app.use('/jira', state.jira.router);
  app.use('/slack', state.slack.router);
  app.use('/linear', state.linear.router);

  const server: Server = createServer(app);
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return Object.assign(fake, {
    baseUrl,
    behave,
    requests,
    state,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  });
}
