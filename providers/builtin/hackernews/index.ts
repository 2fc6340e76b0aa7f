import { z } from 'zod';
import { ProviderHttpError } from '../../sdk/http.js';
import { defineProvider, defineTool, type ToolContext } from '../../sdk/index.js';
import { cookieUser, hnPage, userPath, whoami } from './api.js';
import { htmlToText, PAGE_MAX_CHARS, parseProfile, parseReplyForm, parseStories } from './html.js';

const username = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,32}$/, 'a Hacker News username: letters, digits, - and _')
  .describe('Hacker News username; default the signed-in user');
const page = z.number().int().min(1).max(20).default(1).describe('Page of 30 stories, 1-20 (default 1)');

async function listing(ctx: ToolContext, path: string, pageNo: number) {
  const { page: html } = await hnPage(ctx, `${path}${pageNo > 1 ? `&p=${pageNo}` : ''}`);
  const { stories, more } = parseStories(html, ctx.apiBaseUrl);
  return { page: pageNo, stories, more };
}

const getProfile = defineTool({
  name: 'get_profile',
  description:
    "A Hacker News user's profile as {username, created, karma, about, signedInUser}; without a username, the signed-in " +
    "user's. Next: list_upvoted or list_favorites for what they liked.",
  access: 'read',
  input: z.object({ username: username.optional() }).strict(),
  async run(args, ctx) {
    const name = args.username ?? (await whoami(ctx));
    const { page: html, me } = await hnPage(ctx, userPath(name));
    const profile = parseProfile(html);
    if (!profile) throw new ProviderHttpError(404, `Hacker News has no user named ${name}`);
    return { ...profile, signedInUser: me };
  },
});

const listUpvoted = defineTool({
  name: 'list_upvoted',
  description:
    'Stories the signed-in user upvoted on Hacker News (private to them), newest first, 30 a page, as ' +
    '{page, stories: [{id, title, url, site, points, by, postedAt, comments}], more}. Pass page+1 while more is true.',
  access: 'read',
  input: z.object({ page }).strict(),
  async run(args, ctx) {
    return listing(ctx, `/upvoted?id=${encodeURIComponent(await whoami(ctx))}`, args.page);
  },
});

const listFavorites = defineTool({
  name: 'list_favorites',
  description:
    "Stories a Hacker News user marked as favorite (the signed-in user's by default), 30 a page, as " +
    '{page, stories: [{id, title, url, site, points, by, postedAt, comments}], more}.',
  access: 'read',
  input: z.object({ username: username.optional(), page }).strict(),
  async run(args, ctx) {
    return listing(ctx, `/favorites?id=${encodeURIComponent(args.username ?? (await whoami(ctx)))}`, args.page);
  },
});

const submitComment = defineTool({
  name: 'submit_comment',
  description:
    'Post a comment on Hacker News as the signed-in user, replying to a story or a comment (parentId, the item id in ' +
    'news.ycombinator.com/item?id=…). Returns {posted: true, parentId, url} of the thread. Posts publicly; HN limits how fast.',
  access: 'write',
  input: z
    .object({
      parentId: z.number().int().positive().describe('Id of the story or comment to reply to'),
      text: z.string().trim().min(1).max(10_000).describe('Comment text; blank lines separate paragraphs'),
    })
    .strict(),
  async run(args, ctx) {
    const { page: item } = await hnPage(ctx, `/item?id=${args.parentId}`);
    const form = parseReplyForm(item);
    if (!form) throw new ProviderHttpError(409, `Hacker News offers no reply form on item ${args.parentId} (locked, dead or too old)`);
    const res = await ctx.fetch('/comment', {
      method: 'POST',
      redirect: 'manual',
      headers: { accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ parent: form.parent, goto: form.goto, hmac: form.hmac, text: args.text }).toString(),
    });
    const body = await res.text();
    const location = res.headers.get('location') ?? '';
    if (res.status >= 300 && res.status < 400 && !/(^|\/)login\b/.test(location)) {
      return { posted: true, parentId: args.parentId, url: `${ctx.apiBaseUrl}/item?id=${args.parentId}` };
    }
    if (/(^|\/)login\b/.test(location) || /<form\b[^<>]*action\s*=\s*["']login/i.test(body.slice(0, PAGE_MAX_CHARS))) {
      throw new ProviderHttpError(401, 'Hacker News asked to sign in again');
    }
    // HN explains a refusal ("You're posting too fast…") in a short page.
    throw new ProviderHttpError(
      res.ok ? 400 : res.status,
      htmlToText(body.slice(0, PAGE_MAX_CHARS)).slice(0, 300) || 'Hacker News did not take the comment',
    );
  },
});

export const hackernews = defineProvider(
  {
    name: 'hackernews',
    version: '1.0.0',
    displayName: 'Hacker News',
    description: 'Hacker News as the signed-in user: profile, upvoted and favorite stories, commenting',
    auth: 'cookie',
    envPrefix: 'HACKERNEWS',
    toolPrefix: 'hackernews',
    apiBaseUrl: 'https://news.ycombinator.com',
    cookie: { loginUrl: 'https://news.ycombinator.com/login?goto=news', domain: 'news.ycombinator.com' },
  },
  [getProfile, listUpvoted, listFavorites, submitComment],
  {
    async identify(ctx) {
      const name = cookieUser(ctx.credential);
      const { me } = await hnPage(ctx, name ? userPath(name) : '/news');
      return { externalId: me, label: me };
    },
    async checkSession(ctx) {
      const name = cookieUser(ctx.credential);
      if (!name) return false;
      try {
        return (await hnPage(ctx, userPath(name))).me === name;
      } catch (err) {
        if (err instanceof ProviderHttpError && err.status === 401) return false;
        throw err;
      }
    },
  },
);
