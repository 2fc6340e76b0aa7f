import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import { freePort } from './ports.js';

/**
 * Fake service APIs over real HTTP, speaking the real services' shapes. They accept only access
 * tokens the test authorization server issued (checked against it), and can be told to answer
 * 401, 429, 500, slowly or hugely.
 */

export interface FakeApis {
  baseUrl: string;
  /** Per-path behaviour overrides for the next requests. */
  behave: Map<string, { status?: number; delayMs?: number; body?: unknown; times?: number }>;
  requests: { method: string; path: string; subject?: string }[];
  close(): Promise<void>;
}

const numericId = (login: string) => Number.parseInt(createHash('sha256').update(login).digest('hex').slice(0, 8), 16);

export async function startFakeApis(subjectOf: (token: string) => Promise<string | undefined>): Promise<FakeApis> {
  const app = express();
  app.use(express.json());
  const behave: FakeApis['behave'] = new Map();
  const requests: FakeApis['requests'] = [];

  app.use(async (req: Request, res: Response, next: NextFunction) => {
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const subject = token ? await subjectOf(token) : undefined;
    requests.push({ method: req.method, path: req.path, subject });
    const override = behave.get(req.path);
    if (override) {
      if (override.times !== undefined && --override.times <= 0) behave.delete(req.path);
      if (override.delayMs) await new Promise((r) => setTimeout(r, override.delayMs));
      if (override.status) return res.status(override.status).json(override.body ?? { message: `status ${override.status}` });
    }
    if (!subject) return res.status(401).json({ message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' });
    res.locals.login = subject;
    next();
  });

  // GitHub REST shapes (https://docs.github.com/rest).
  const github = express.Router();
  github.get('/user', (_req, res) => {
    const login = res.locals.login as string;
    res.json({
      login,
      id: numericId(login),
      name: login,
      email: `${login}@example.com`,
      html_url: `https://github.com/${login}`,
      type: 'User',
    });
  });
  github.get('/user/repos', (req, res) => {
    const login = res.locals.login as string;
    const perPage = Number(req.query.per_page ?? 30);
    const repos = Array.from({ length: 3 }, (_, i) => ({
      id: 1000 + i,
      name: `repo-${i}`,
      full_name: `${login}/repo-${i}`,
      private: i === 2,
      description: `Repository ${i}`,
      default_branch: 'main',
      updated_at: '2026-11-01T00:00:00Z',
      owner: { login },
    }));
    res.json(repos.slice(0, perPage));
  });
  app.use('/github', github);

  const port = await freePort();
  const server: Server = createServer(app);
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    behave,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
