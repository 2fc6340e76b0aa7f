import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isServiceHost } from '../../platform/egress/egress-policy.js';
import { parseProfile, parseReplyForm, parseStories, signedInUser } from '../../providers/builtin/hackernews/html.js';
import { hackernews } from '../../providers/builtin/hackernews/index.js';
import { ProviderRegistry } from '../../providers/registry.js';
import { ProviderHttpError } from '../../providers/sdk/http.js';
import type { ToolContext } from '../../providers/sdk/index.js';
import { cookieMatchesDomain } from '../../surfaces/portal/cookie-capture/capture-sessions.js';

// Shapes copied from news.ycombinator.com (trimmed).
const TOP_SIGNED_IN = `<span class="pagetop"><a id='me' href="user?id=alice">alice</a> (42) | <a id='logout' rel='nofollow' href="logout?auth=abc&amp;goto=news">logout</a></span>`;
const TOP_SIGNED_OUT = `<span class="pagetop"><a href="login?goto=news">login</a></span>`;
const PROFILE = `<table border="0" ><tr class="athing"><td valign="top">user:</td><td timestamp="1160418092"><a href="user?id=pg" class="hnuser">pg</a></td></tr>
<tr><td valign="top">created:</td><td><a href="front?day=2006-10-09&birth=pg">October 9, 2006</a></td></tr><tr><td valign="top">karma:</td><td>
157316</td></tr><tr><td valign="top">about:</td><td style="overflow:hidden;">Bug fixer.<p>Don&#x27;t email <a href="mailto:x">x</a></td></tr></table>`;
const OWN_PROFILE = `<tr><td valign="top">user:</td><td><a href="user?id=alice" class="hnuser">alice</a></td></tr>
<tr><td valign="top">karma:</td><td>12</td></tr><tr><td valign="top">about:</td><td><textarea cols="60" rows="5" wrap="virtual" name="about">I &amp; me</textarea><br><font size="-2"><a href="formatdoc">help</a></font></td></tr>`;
const LISTING = `<table border="0" cellpadding="0" cellspacing="0">
<tr class='athing submission' id='42000000'>
      <td align="right" valign="top" class="title"><span class="rank">1.</span></td>      <td valign="top" class="votelinks"><center><a id='up_42000000' href='vote?id=42000000&amp;how=up&amp;goto=news'><div class='votearrow' title='upvote'></div></a></center></td><td class="title"><span class="titleline"><a href="https://example.com/post">Rust &amp; &quot;you&quot;</a><span class="sitebit comhead"> (<a href="from?site=example.com"><span class="sitestr">example.com</span></a>)</span></span></td></tr><tr><td colspan="2"></td><td class="subtext"><span class="subline">
          <span class="score" id="score_42000000">123 points</span> by <a href="user?id=someone" class="hnuser">someone</a> <span class="age" title="2024-10-30T12:00:00 1730289600"><a href="item?id=42000000">2 hours ago</a></span> <span id="unv_42000000"></span> | <a href="hide?id=42000000&amp;goto=news">hide</a> | <a href="item?id=42000000">45&nbsp;comments</a>        </span>
              </td></tr>
<tr class="spacer" style="height:5px"></tr>
<tr class='athing submission' id='42000001'><td class="title"><span class="titleline"><a href="item?id=42000001">Ask HN: Anything?</a></span></td></tr>
<tr><td colspan="2"></td><td class="subtext"><span class="subline"><span class="score" id="score_42000001">1 point</span> by <a href="user?id=asker" class="hnuser">asker</a> <span class="age" title="2024-10-30T13:00:00"><a href="item?id=42000001">1 hour ago</a></span> | <a href="item?id=42000001">discuss</a></span></td></tr>
<tr class="morespace" style="height:10px"></tr><tr><td colspan="2"></td><td class='title'><a href='upvoted?id=alice&amp;p=2' class='morelink' rel='next'>More</a></td></tr></table>`;
const ITEM = `<form action="comment" method="post"><input type="hidden" name="parent" value="42000000"><input type="hidden" name="goto" value="item?id=42000000"><input type="hidden" name="hmac" value="0123abcd"><textarea name="text" rows="8" cols="80" wrap="virtual"></textarea><br><br><input type="submit" value="add comment"></form>`;

function fakeContext(
  pages: Record<string, { status?: number; body: string; location?: string }>,
  cookie = 'alice&tok',
): ToolContext & {
  seen: { path: string; init?: RequestInit }[];
} {
  const seen: { path: string; init?: RequestInit }[] = [];
  return {
    seen,
    credential: { type: 'cookie', cookies: [{ name: 'user', value: cookie, domain: 'news.ycombinator.com', path: '/' }] },
    apiBaseUrl: 'https://news.ycombinator.com',
    signal: new AbortController().signal,
    logger: { info() {}, warn() {} },
    caller: { tenantId: 't', userId: 'u' },
    async fetch(path, init) {
      seen.push({ path, init });
      const page = pages[path] ?? { status: 404, body: 'Unknown.' };
      return new Response(page.body, { status: page.status ?? 200, headers: page.location ? { location: page.location } : {} });
    },
  };
}

const tool = (name: string) => hackernews.tools.find((t) => t.name === name)!;

describe('hackernews provider', () => {
  it('is a cookie integration with four tools: three reads and one write', () => {
    expect(hackernews.manifest).toMatchObject({
      auth: 'cookie',
      envPrefix: 'HACKERNEWS',
      cookie: { domain: 'news.ycombinator.com', loginUrl: 'https://news.ycombinator.com/login?goto=news' },
    });
    expect(Object.fromEntries(hackernews.tools.map((t) => [t.name, t.access]))).toEqual({
      get_profile: 'read',
      list_upvoted: 'read',
      list_favorites: 'read',
      submit_comment: 'write',
    });
    for (const t of hackernews.tools) {
      expect(t.description.length).toBeGreaterThanOrEqual(40);
      const schema = z.toJSONSchema(t.input) as { properties?: Record<string, { description?: string }> };
      for (const [name, p] of Object.entries(schema.properties ?? {})) expect(p.description, `${t.name}.${name}`).toBeTruthy();
    }
  });

  it('reads the signed-in user, profiles, story listings and the reply form from HN pages', () => {
    expect(signedInUser(TOP_SIGNED_IN)).toBe('alice');
    expect(signedInUser(TOP_SIGNED_OUT)).toBeUndefined();
    expect(parseProfile(PROFILE)).toEqual({
      username: 'pg',
      created: 'October 9, 2006',
      karma: 157316,
      about: "Bug fixer.\n\nDon't email x",
    });
    expect(parseProfile(OWN_PROFILE)).toEqual({ username: 'alice', created: null, karma: 12, about: 'I & me' });
    expect(parseProfile('No such user.')).toBeUndefined();
    expect(parseStories(LISTING, 'https://news.ycombinator.com')).toEqual({
      stories: [
        {
          id: 42000000,
          title: 'Rust & "you"',
          url: 'https://example.com/post',
          site: 'example.com',
          points: 123,
          by: 'someone',
          postedAt: '2024-10-30T12:00:00',
          comments: 45,
        },
        {
          id: 42000001,
          title: 'Ask HN: Anything?',
          url: 'https://news.ycombinator.com/item?id=42000001',
          site: null,
          points: 1,
          by: 'asker',
          postedAt: '2024-10-30T13:00:00',
          comments: 0,
        },
      ],
      more: true,
    });
    expect(parseReplyForm(ITEM)).toEqual({ parent: '42000000', goto: 'item?id=42000000', hmac: '0123abcd' });
    expect(parseReplyForm(TOP_SIGNED_IN)).toBeUndefined();
  });

  it('a signed-out page is a 401 (so the account is marked needs_reauth); checkSession says false', async () => {
    const out = fakeContext({ '/user?id=alice': { body: TOP_SIGNED_OUT + PROFILE } });
    await expect(tool('get_profile').run({}, out)).rejects.toMatchObject({ status: 401 });
    await expect(tool('get_profile').run({}, out)).rejects.toBeInstanceOf(ProviderHttpError);
    expect(await hackernews.checkSession!(out)).toBe(false);
    const live = fakeContext({ '/user?id=alice': { body: TOP_SIGNED_IN + OWN_PROFILE } });
    expect(await hackernews.checkSession!(live)).toBe(true);
    expect(await hackernews.identify!(live)).toEqual({ externalId: 'alice', label: 'alice' });
    expect(await hackernews.checkSession!(fakeContext({}, ''))).toBe(false);
    await expect(hackernews.checkSession!(fakeContext({ '/user?id=alice': { status: 503, body: 'Sorry.' } }))).rejects.toMatchObject({
      status: 503,
    });
  });

  it('submit_comment posts the reply form with its hmac; a refusal is an error', async () => {
    const ctx = fakeContext({
      '/item?id=42000000': { body: TOP_SIGNED_IN + ITEM },
      '/comment': { status: 302, body: '', location: 'item?id=42000000' },
    });
    expect(await tool('submit_comment').run({ parentId: 42000000, text: 'Nice.' }, ctx)).toEqual({
      posted: true,
      parentId: 42000000,
      url: 'https://news.ycombinator.com/item?id=42000000',
    });
    const post = ctx.seen.find((s) => s.path === '/comment')!;
    expect(post.init?.method).toBe('POST');
    expect(Object.fromEntries(new URLSearchParams(String(post.init?.body)))).toEqual({
      parent: '42000000',
      goto: 'item?id=42000000',
      hmac: '0123abcd',
      text: 'Nice.',
    });
    const slow = fakeContext({
      '/item?id=42000000': { body: TOP_SIGNED_IN + ITEM },
      '/comment': { body: "You're posting too fast. Please slow down. Thanks." },
    });
    await expect(tool('submit_comment').run({ parentId: 42000000, text: 'x' }, slow)).rejects.toMatchObject({
      status: 400,
      body: expect.stringContaining('posting too fast'),
    });
  });
});

describe('cookie capture domains', () => {
  it('keeps only cookies the service host would receive', () => {
    expect(cookieMatchesDomain('news.ycombinator.com', 'news.ycombinator.com')).toBe(true);
    expect(cookieMatchesDomain('.ycombinator.com', 'news.ycombinator.com')).toBe(true);
    expect(cookieMatchesDomain('ycombinator.com', 'news.ycombinator.com')).toBe(false); // host-only of the parent
    expect(cookieMatchesDomain('.news.ycombinator.com', 'news.ycombinator.com')).toBe(true);
    expect(cookieMatchesDomain('api.news.ycombinator.com', 'news.ycombinator.com')).toBe(false);
    expect(cookieMatchesDomain('.google.com', 'news.ycombinator.com')).toBe(false);
    expect(cookieMatchesDomain('.com', 'news.ycombinator.com')).toBe(false);
    expect(cookieMatchesDomain('evilnews.ycombinator.com', 'news.ycombinator.com')).toBe(false);
  });

  it('lets the remote page navigate within the service only', () => {
    expect(isServiceHost('news.ycombinator.com', 'news.ycombinator.com', 'news.ycombinator.com')).toBe(true);
    expect(isServiceHost('ycombinator.com', 'news.ycombinator.com', 'news.ycombinator.com')).toBe(true);
    expect(isServiceHost('169.254.169.254', 'news.ycombinator.com', 'news.ycombinator.com')).toBe(false);
    expect(isServiceHost('example.com', 'news.ycombinator.com', 'news.ycombinator.com')).toBe(false);
  });

  it('the cookie domain follows an overridden login URL outside the manifest domain', () => {
    const env = (url?: string) => ({ hackernews: { urls: url ? { LOGIN_URL: url } : ({} as Record<string, string>) } });
    expect(new ProviderRegistry([hackernews], env()).cookieDomain('hackernews')).toBe('news.ycombinator.com');
    expect(new ProviderRegistry([hackernews], env('http://127.0.0.1:5555/login')).cookieDomain('hackernews')).toBe('127.0.0.1');
    expect(new ProviderRegistry([hackernews], env('https://sso.news.ycombinator.com/login')).cookieDomain('hackernews')).toBe(
      'news.ycombinator.com',
    );
  });
});
