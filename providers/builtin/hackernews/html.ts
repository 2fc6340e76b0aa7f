/**
 * Minimal readers of Hacker News's server-rendered pages. The official API (Firebase) is public
 * and read-only; what a signed-in session sees (your upvotes, replying) exists only as HTML, so
 * these read the few shapes the tools need and nothing more.
 *
 * The page is the upstream's answer (up to the 10 MB response cap) and these run on the worker's
 * event loop, so the work here is linear in the page: tags are found whole with `<name\b[^<>]*>`
 * (it stops at the next `<`, so no two attempts scan the same run) and their attributes read
 * from the tag alone; an element's text is read up to its closing tag with indexOf, within
 * TEXT_MAX characters. `[^>]*`, or a lazy `[\s\S]*?` before a closing tag that never comes,
 * makes every start scan to the end of the page: quadratic (cubic for an attribute test inside
 * `<a[^>]*…[^>]*>`), minutes for a hostile page of a megabyte.
 */

/**
 * How much of a page is read (UTF-16 code units): what the tools need (the top bar, 30 stories,
 * a profile, the reply form above the comments) lies well within it.
 */
export const PAGE_MAX_CHARS = 256 * 1024;

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, code: string) => {
    if (code[0] === '#') {
      const n = code[1] === 'x' || code[1] === 'X' ? Number.parseInt(code.slice(2), 16) : Number.parseInt(code.slice(1), 10);
      return Number.isFinite(n) && n > 0 && n <= 0x10ffff ? String.fromCodePoint(n) : whole;
    }
    return NAMED[code.toLowerCase()] ?? whole;
  });
}

/** Text of an HTML fragment: paragraphs and line breaks kept, tags dropped, entities decoded. */
export function htmlToText(fragment: string): string {
  const text = fragment
    .replace(/<p>/gi, '\n\n')
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<[^<>]*>/g, '');
  return decodeEntities(text)
    .replace(/[ \t]+\n/g, '\n')
    .trim();
}

const attributePatterns = new Map<string, RegExp>();
const attr = (tag: string, name: string): string | undefined => {
  let pattern = attributePatterns.get(name);
  if (!pattern) {
    pattern = new RegExp(`\\b${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)')`, 'i');
    attributePatterns.set(name, pattern);
  }
  const m = pattern.exec(tag);
  return m ? decodeEntities(m[1] ?? m[2]) : undefined;
};

/** The signed-in user named in the top bar (`<a id="me" href="user?id=…">`), if any. */
export function signedInUser(page: string): string | undefined {
  let tag: string | undefined;
  for (const [a] of page.slice(0, PAGE_MAX_CHARS).matchAll(/<a\b[^<>]*>/gi)) {
    if (/\bid\s*=\s*["']me["']/i.test(a)) {
      tag = a;
      break;
    }
  }
  const href = tag ? attr(tag, 'href') : undefined;
  const id = href ? /[?&]id=([^&#]+)/.exec(href)?.[1] : undefined;
  return id ? decodeURIComponent(id) : undefined;
}

interface Profile {
  username: string;
  created: string | null;
  karma: number | null;
  about: string | null;
}

/** The `user:`, `created:`, `karma:` and `about:` rows of a profile page (`/user?id=…`). */
export function parseProfile(page: string): Profile | undefined {
  const rows = new Map<string, string>();
  const read = page.slice(0, PAGE_MAX_CHARS);
  for (const m of read.matchAll(/<td\b[^<>]*>\s*(user|created|karma|about):\s*<\/td>\s*<td\b[^<>]*>([\s\S]*?)<\/td>/gi)) {
    rows.set(m[1].toLowerCase(), m[2]);
  }
  const user = rows.get('user');
  if (user === undefined) return undefined;
  const about = rows.get('about');
  // On your own profile `about` is an editable textarea.
  const aboutText = about === undefined ? null : htmlToText(between(about, /<textarea\b[^<>]*>/i, '</textarea>') ?? about);
  const karma = rows.get('karma');
  return {
    username: htmlToText(user),
    created: rows.has('created') ? htmlToText(rows.get('created') as string) : null,
    karma: karma === undefined || !/\d/.test(karma) ? null : Number.parseInt(htmlToText(karma).replace(/\D/g, ''), 10),
    about: aboutText || null,
  };
}

interface Story {
  id: number;
  title: string;
  url: string;
  site: string | null;
  points: number | null;
  by: string | null;
  /** The `title` of the age span: an ISO time (optionally followed by a Unix time). */
  postedAt: string | null;
  comments: number;
}

/** Story rows (`<tr class="athing submission" id="…">` and its subtext row) of a listing page. */
export function parseStories(page: string, baseUrl: string): { stories: Story[]; more: boolean } {
  const read = page.slice(0, PAGE_MAX_CHARS);
  const starts = [...openTags(read, 'tr')].filter((tr) => hasClass(tr.tag, 'athing'));
  const stories: Story[] = [];
  starts.forEach((row, i) => {
    // A story's chunk: its row and the subtext row after it, up to the next story.
    const chunk = read.slice(row.at, starts[i + 1]?.at ?? read.length);
    const id = Number(attr(row.tag, 'id'));
    const titleline = first(openTags(chunk, 'span'), (t) => hasClass(t.tag, 'titleline'));
    const anchor = titleline && /\s*(<a\b[^<>]*>)/y;
    if (anchor) anchor.lastIndex = titleline.end;
    const link = anchor?.exec(chunk);
    if (!id || !anchor || !link) return;
    const title = textAfter(chunk, anchor.lastIndex, '</a>');
    if (title === undefined) return;
    const href = attr(link[1], 'href') ?? `item?id=${id}`;
    const score = first(openTags(chunk, 'span'), (t) => hasClass(t.tag, 'score'));
    const points = score && /^\s*(\d+)\s+points?/i.exec(chunk.slice(score.end, score.end + 100))?.[1];
    const comments = /<a\b[^<>]*>\s*(\d+)(?:&nbsp;|\s)+comments?\s*<\/a>/i.exec(chunk)?.[1];
    const site = first(openTags(chunk, 'span'), (t) => hasClass(t.tag, 'sitestr'));
    const by = first(openTags(chunk, 'a'), (t) => hasClass(t.tag, 'hnuser'));
    const age = first(openTags(chunk, 'span'), (t) => hasClass(t.tag, 'age'));
    stories.push({
      id,
      title: htmlToText(title),
      url: new URL(href, `${baseUrl}/`).toString(),
      site: (site && htmlToText(textAfter(chunk, site.end, '</span>') ?? '')) || null,
      points: points ? Number(points) : null,
      by: (by && htmlToText(textAfter(chunk, by.end, '</a>') ?? '')) || null,
      postedAt: (age && attr(age.tag, 'title')?.split(' ')[0]) || null,
      comments: comments ? Number(comments) : 0,
    });
  });
  return { stories, more: /\bclass\s*=\s*["']morelink["']/i.test(read) };
}

interface ReplyForm {
  parent: string;
  goto: string;
  hmac: string;
}

/** The reply form of an item page (`<form action="comment">` with parent, goto and hmac). */
export function parseReplyForm(page: string): ReplyForm | undefined {
  const form = between(page.slice(0, PAGE_MAX_CHARS), /<form\b[^<>]*\baction\s*=\s*["']comment["'][^<>]*>/i, '</form>');
  if (!form) return undefined;
  const fields = new Map<string, string>();
  for (const input of openTags(form, 'input')) {
    const name = attr(input.tag, 'name');
    if (name) fields.set(name, attr(input.tag, 'value') ?? '');
  }
  const parent = fields.get('parent');
  const hmac = fields.get('hmac');
  return parent && hmac ? { parent, hmac, goto: fields.get('goto') ?? `item?id=${parent}` } : undefined;
}

/** A text HN puts inside one element (a title, a site, a user name) is short: longer is not one. */
const TEXT_MAX = 2000;

/** The opening tags `<name …>` of `html`: where each starts and ends. Linear: a tag's inside holds no `<` or `>`. */
function* openTags(html: string, name: string): Generator<{ tag: string; at: number; end: number }> {
  for (const m of html.matchAll(new RegExp(`<${name}\\b[^<>]*>`, 'gi'))) yield { tag: m[0], at: m.index, end: m.index + m[0].length };
}

function first<T>(items: Iterable<T>, test: (item: T) => boolean): T | undefined {
  for (const item of items) if (test(item)) return item;
  return undefined;
}

/** Whether a tag's `class` attribute lists `name`. */
const hasClass = (tag: string, name: string): boolean => (attr(tag, 'class') ?? '').split(/\s+/).includes(name);

/** The text from `from` up to `close` (case-insensitive), when `close` comes within TEXT_MAX characters. */
function textAfter(html: string, from: number, close: string): string | undefined {
  const window = html.slice(from, from + TEXT_MAX + close.length);
  const end = window.toLowerCase().indexOf(close);
  return end === -1 ? undefined : window.slice(0, end);
}

/** The text between the first match of `open` and the next `close` after it, found without backtracking. */
function between(html: string, open: RegExp, close: string): string | undefined {
  const start = open.exec(html);
  if (!start) return undefined;
  const from = start.index + start[0].length;
  const end = html.toLowerCase().indexOf(close, from);
  return end === -1 ? undefined : html.slice(from, end);
}
