import { describe, expect, it } from 'vitest';
import { PAGE_MAX_CHARS, parseProfile, parseReplyForm, parseStories, signedInUser } from '../../providers/builtin/hackernews/html.js';

/**
 * Hacker News pages are the upstream's answer (up to the 10 MB response cap), read on the worker's
 * event loop: the readers look at the first PAGE_MAX_CHARS only, and hostile markup (tags that never
 * close, attributes repeated inside one tag, closing tags that never come) costs a pass over that,
 * not a scan to the end of the page from every `<`. docs/security/work-bounds.md has the measured figures.
 */

const BASE = 'https://news.ycombinator.com';
const story = (id: number) =>
  `<tr class="athing submission" id="${id}"><td><span class="titleline"><a href="https://example.com/${id}">Story ${id}</a>` +
  ` <span class="sitebit comhead">(<a href="from?site=example.com"><span class="sitestr">example.com</span></a>)</span></span></td></tr>` +
  `<tr><td class="subtext"><span class="score" id="score_${id}">${id} points</span> by <a href="user?id=pg" class="hnuser">pg</a>` +
  ` <span class="age" title="2026-01-02T03:04:05 1767323045"><a href="item?id=${id}">1 hour ago</a></span> | <a href="item?id=${id}">${id}&nbsp;comments</a></td></tr>`;

describe('Hacker News pages: only the first part is read', () => {
  it('finds nothing past PAGE_MAX_CHARS: the top bar, stories, a profile row and the reply form lie well before it', () => {
    const padding = ' '.repeat(PAGE_MAX_CHARS);
    expect(signedInUser(`${padding}<a id="me" href="user?id=pg">pg</a>`)).toBeUndefined();
    expect(parseStories(`${padding}${story(1)}`, BASE).stories).toEqual([]);
    expect(parseProfile(`${padding}<td>user:</td><td>pg</td>`)).toBeUndefined();
    expect(
      parseReplyForm(`${padding}<form action="comment"><input name="parent" value="1"><input name="hmac" value="h"></form>`),
    ).toBeUndefined();
  });

  it('still reads what a real page holds, in the shapes HN sends', () => {
    expect(signedInUser('<a id="me" href="user?id=pg">pg</a>')).toBe('pg');
    expect(parseStories(`<table>${story(7)}${story(8)}</table><a class="morelink" href="news?p=2">More</a>`, BASE)).toEqual({
      stories: [7, 8].map((id) => ({
        id,
        title: `Story ${id}`,
        url: `https://example.com/${id}`,
        site: 'example.com',
        points: id,
        by: 'pg',
        postedAt: '2026-01-02T03:04:05',
        comments: id,
      })),
      more: true,
    });
    const form =
      '<form action="comment" method="post"><input type="hidden" name="parent" value="9"><input name="goto" value="item?id=9"><input name="hmac" value="abc"><textarea name="text"></textarea></form>';
    expect(parseReplyForm(form)).toEqual({ parent: '9', goto: 'item?id=9', hmac: 'abc' });
    expect(
      parseProfile(
        '<td>user:</td><td><a href="user?id=pg">pg</a></td><td>karma:</td><td>1,234</td><td>about:</td><td><textarea>hi &amp; bye</textarea></td>',
      ),
    ).toEqual({
      username: 'pg',
      created: null,
      karma: 1234,
      about: 'hi & bye',
    });
  });

  it('parses hostile markup at the read limit (each of these scanned to the end of the page from every start before)', () => {
    const fill = (unit: string) => unit.repeat(Math.ceil(PAGE_MAX_CHARS / unit.length));
    const top = '<a id="me" href="user?id=pg">pg</a>';
    expect(signedInUser(fill('<a id="me" '))).toBeUndefined();
    expect(signedInUser(`${top}${fill('<a ')}`)).toBe('pg');
    expect(parseStories(fill('<tr '), BASE).stories).toEqual([]);
    expect(parseStories(`<tr class="athing" id="1">${fill('<span class="titleline"><a>')}`, BASE).stories).toEqual([]);
    expect(parseStories(`${story(1)}${fill('<a class="hnuser" ')}`, BASE).stories).toHaveLength(1);
    expect(parseStories(`${story(2)}${fill('<span class="score" ')}`, BASE).stories).toHaveLength(1);
    expect(parseProfile(fill('<td '))).toBeUndefined();
    expect(parseReplyForm(fill('<form '))).toBeUndefined();
    expect(parseReplyForm(`<form action="comment">${fill('<input ')}`)).toBeUndefined();
  });
});
