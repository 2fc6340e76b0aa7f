import express, { type NextFunction, type Request, type Response } from 'express';
import { createFakeGithub, type FakeGithub, githubUnauthorized } from './fake-apis/github.js';
import { createFakeJira, type FakeJira, jiraUnauthorized } from './fake-apis/jira.js';
import { createFakeLinear, type FakeLinear } from './fake-apis/linear.js';
import { createFakeSlack, type FakeSlack, slackUnauthorized } from './fake-apis/slack.js';
import { startLocalServer } from './local-server.js';
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
  behave: Map<
    string,
    {
      status?: number;
      delayMs?: number;
      body?: unknown;
      times?: number;
      /** Extra response headers (a redirect's Location). */
      headers?: Record<string, string>;
      /** Answer 200 and stream bytes until the client hangs up (a hostile or broken upstream). */
      endless?: boolean;
      /**
       * Cut the connection once the request is read: `before-answer` destroys it without a byte of
       * answer, `mid-body` sends the headers and part of the body first.
       */
      reset?: 'before-answer' | 'mid-body';
    }
  >;
  /** `credential`: whether the request carried an Authorization or Cookie header. */
  requests: { method: string; path: string; subject?: string; contentType?: string; credential: boolean }[];
  /** Bytes written by `endless` answers before their clients hung up. */
  endlessBytesSent: number;
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
  const fake = { maxInFlight: 0, abandoned: 0, endlessBytesSent: 0 };
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
    const credential = Boolean(req.headers.authorization || req.headers.cookie);
    requests.push({ method: req.method, path: req.path, subject, contentType: req.headers['content-type'], credential });
    const override = behave.get(req.path);
    if (override) {
      if (override.times !== undefined && --override.times <= 0) behave.delete(req.path);
      if (override.delayMs) await new Promise((r) => setTimeout(r, override.delayMs));
      if (override.headers) res.set(override.headers);
      if (override.endless) return streamForever(res, fake);
      if (override.reset === 'before-answer') return void req.socket.destroy();
      if (override.reset === 'mid-body') {
        res.writeHead(201, { 'content-type': 'application/json', 'content-length': '4096' });
        res.write('{"number": 1, "title": ');
        return void setTimeout(() => req.socket.destroy(), 20);
      }
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

  const { close } = await startLocalServer(app, port);
  return Object.assign(fake, {
    baseUrl,
    behave,
    requests,
    state,
    close,
  });
}

/**
 * A JSON array that never ends, about 64 KiB a millisecond (fast, yet slow enough that a client
 * without a cap fills memory gradually rather than at once), until the client hangs up.
 */
function streamForever(res: Response, counter: { endlessBytesSent: number }): void {
  const chunk = Buffer.from(`${JSON.stringify({ filler: 'x'.repeat(64 * 1024) })},`);
  res.status(200).type('application/json');
  res.write('[');
  const pump = () => {
    if (res.destroyed) return;
    counter.endlessBytesSent += chunk.length;
    if (res.write(chunk)) setTimeout(pump, 1);
    else res.once('drain', pump);
  };
  pump();
}
