import { randomBytes } from 'node:crypto';
import express, { type Express, type Request, type Response } from 'express';
import { startLocalServer } from './local-server.js';
import { freePort } from './ports.js';

/**
 * A small Hacker News look-alike for cookie-capture tests: a form login that sets HN's session
 * cookie (`user=<name>&<token>`, host-only, HttpOnly) on its own host, and pages in HN's HTML
 * shapes that show the signed-in top bar only for a live session. The login form sits at fixed
 * coordinates (see LOGIN_FIELDS) so a test can click it through the live view.
 */

export const PASSWORD = 'hunter2';

/** Centres of the login form's controls in the 1024×768 viewport. */
export const LOGIN_FIELDS = {
  username: { x: 450, y: 130 },
  password: { x: 450, y: 210 },
  submit: { x: 360, y: 292 },
} as const;

export interface HnSite {
  url: string;
  port: number;
  /** Live sessions: token → username. */
  sessions: Map<string, string>;
  /** Paths requested with the method, for counting session checks. */
  requests: string[];
  /** Forgets every session of `name` (the service expiring it). */
  expire(name: string): void;
  close(): Promise<void>;
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const STYLE = `body{margin:0;font:18px Verdana,Geneva,sans-serif;background:#f6f6ef}
.pagetop{display:block;background:#ff6600;height:44px;line-height:44px;padding:0 12px}
form.login{position:absolute;left:100px;top:100px;width:600px;height:240px}
form.login label{position:absolute;left:0;font-size:20px}
form.login input{position:absolute;left:200px;width:300px;height:40px;font-size:20px;box-sizing:border-box}
form.login input[type=submit]{width:120px;height:44px}`;

function layout(me: string | undefined, body: string): string {
  const bar = me
    ? `<a id="me" href="user?id=${esc(me)}">${esc(me)}</a> (42) | <a id="logout" rel="nofollow" href="logout?auth=x&amp;goto=news">logout</a>`
    : `<a href="login?goto=news">login</a>`;
  return `<html lang="en" op="news"><head><meta name="viewport" content="width=device-width, initial-scale=1.0"><style>${STYLE}</style><title>Hacker News</title></head>
<body><center><table id="hnmain"><tr><td><span class="pagetop"><b class="hnname"><a href="news">Hacker News</a></b> ${bar}</span></td></tr>
<tr><td>${body}</td></tr></table></center></body></html>`;
}

function story(id: number, title: string, url: string, site: string, points: number, by: string, comments: number): string {
  return `<tr class='athing submission' id='${id}'>
      <td align="right" valign="top" class="title"><span class="rank">1.</span></td><td class="title"><span class="titleline"><a href="${url}">${esc(title)}</a><span class="sitebit comhead"> (<a href="from?site=${site}"><span class="sitestr">${site}</span></a>)</span></span></td></tr>
<tr><td colspan="2"></td><td class="subtext"><span class="subline"><span class="score" id="score_${id}">${points} points</span> by <a href="user?id=${by}" class="hnuser">${by}</a> <span class="age" title="2024-10-30T12:00:00 1730289600"><a href="item?id=${id}">2 hours ago</a></span> | <a href="item?id=${id}">${comments}&nbsp;comments</a></span></td></tr>`;
}

/** `routes` adds pages of a test's own on the service's host (e.g. a redirect elsewhere). */
export async function startHnSite(options: { routes?: (app: Express) => void } = {}): Promise<HnSite> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const sessions = new Map<string, string>();
  const requests: string[] = [];
  const app = express();
  app.use(express.urlencoded({ extended: false }));
  app.use((req, _res, next) => {
    requests.push(`${req.method} ${req.path}`);
    next();
  });

  const me = (req: Request): string | undefined => {
    const raw = /(?:^|;\s*)user=([^;]*)/.exec(req.headers.cookie ?? '')?.[1];
    const [name, token] = decodeURIComponent(raw ?? '').split('&');
    return token && sessions.get(token) === name ? name : undefined;
  };

  app.get('/login', (_req: Request, res: Response) => {
    res.send(
      layout(
        undefined,
        `<form class="login" method="post" action="login"><input type="hidden" name="goto" value="news">
<label style="top:8px">username:</label><input type="text" name="acct" autocapitalize="off" style="top:10px">
<label style="top:88px">password:</label><input type="password" name="pw" style="top:90px">
<input type="submit" value="login" style="top:170px"></form>`,
      ),
    );
  });

  app.post('/login', (req: Request, res: Response) => {
    const acct = String(req.body?.acct ?? '');
    if (!/^[A-Za-z0-9_-]{2,15}$/.test(acct) || req.body?.pw !== PASSWORD) {
      res.send(layout(undefined, '<p>Bad login.</p>'));
      return;
    }
    const token = randomBytes(16).toString('hex');
    sessions.set(token, acct);
    res.setHeader('set-cookie', `user=${acct}&${token}; Path=/; HttpOnly; SameSite=Lax`);
    res.redirect(302, `/${String(req.body?.goto ?? 'news')}`);
  });

  app.get('/news', (req: Request, res: Response) => {
    res.send(
      layout(
        me(req),
        `<table>${story(41000001, 'Show HN: A tiny login site', 'https://example.com/tiny', 'example.com', 120, 'pg', 45)}</table>`,
      ),
    );
  });

  app.get('/user', (req: Request, res: Response) => {
    const name = String(req.query.id ?? '');
    if (!/^[A-Za-z0-9_-]{2,15}$/.test(name)) {
      res.send('No such user.');
      return;
    }
    const self = me(req) === name;
    const about = self
      ? `<textarea cols="60" rows="5" wrap="virtual" name="about">Builds &amp; tests things.</textarea>`
      : 'Builds &amp; tests things.<p>Second paragraph.';
    res.send(
      layout(
        me(req),
        `<table border="0"><tr class="athing"><td valign="top">user:</td><td timestamp="1160418092"><a href="user?id=${name}" class="hnuser">${name}</a></td></tr>
<tr><td valign="top">created:</td><td><a href="front?day=2006-10-09&amp;birth=${name}">October 9, 2006</a></td></tr>
<tr><td valign="top">karma:</td><td>1,234</td></tr>
<tr><td valign="top">about:</td><td style="overflow:hidden;">${about}</td></tr></table>`,
      ),
    );
  });

  app.get('/favorites', (req: Request, res: Response) => {
    res.send(
      layout(
        me(req),
        `<table>${story(41000002, 'Cookies &amp; sessions', 'item?id=41000002', 'news.ycombinator.com', 7, 'dang', 3)}</table>`,
      ),
    );
  });

  options.routes?.(app);
  const { close } = await startLocalServer(app, port);
  return {
    url,
    port,
    sessions,
    requests,
    expire(name) {
      for (const [token, user] of sessions) if (user === name) sessions.delete(token);
    },
    close,
  };
}
