/**
 * Minimal readers of Hacker News's server-rendered pages. The official API (Firebase) is public
 * and read-only; what a signed-in session sees (your upvotes, replying) exists only as HTML, so
 * these read the few shapes the tools need and nothing more.
 */

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

export function decodeEntities(text: string): string {
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
    .replace(/<[^>]*>/g, '');
  return decodeEntities(text)
    .replace(/[ \t]+\n/g, '\n')
    .trim();
}

const attr = (tag: string, name: string): string | undefined => {
  const m = new RegExp(`\\b${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)')`, 'i').exec(tag);
  return m ? decodeEntities(m[1] ?? m[2]) : undefined;
};

/** The signed-in user named in the top bar (`<a id="me" href="user?id=…">`), if any. */
export function signedInUser(page: string): string | undefined {
  const tag = /<a\b[^>]*\bid\s*=\s*["']me["'][^>]*>/i.exec(page)?.[0];
  const href = tag ? attr(tag, 'href') : undefined;
  const id = href ? /[?&]id=([^&#]+)/.exec(href)?.[1] : undefined;
  return id ? decodeURIComponent(id) : undefined;
}

export interface Profile {
  username: string;
  created: string | null;
  karma: number | null;
  about: string | null;
}

/** The `user:`, `created:`, `karma:` and `about:` rows of a profile page (`/user?id=…`). */
export function parseProfile(page: string): Profile | undefined {
  const rows = new Map<string, string>();
  for (const m of page.matchAll(/<td[^>]*>\s*(user|created|karma|about):\s*<\/td>\s*<td[^>]*>([\s\S]*?)<\/td>/gi)) {
    rows.set(m[1].toLowerCase(), m[2]);
  }
  const user = rows.get('user');
  if (user === undefined) return undefined;
  const about = rows.get('about');
  // On your own profile `about` is an editable textarea.
  const aboutText = about === undefined ? null : htmlToText(/<textarea[^>]*>([\s\S]*?)<\/textarea>/i.exec(about)?.[1] ?? about);
  const karma = rows.get('karma');
  return {
    username: htmlToText(user),
    created: rows.has('created') ? htmlToText(rows.get('created') as string) : null,
    karma: karma === undefined || !/\d/.test(karma) ? null : Number.parseInt(htmlToText(karma).replace(/\D/g, ''), 10),
    about: aboutText || null,
  };
}

export interface Story {
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
  const chunks = page.split(/<tr\b(?=[^>]*\bclass\s*=\s*["'][^"']*\bathing\b)/i).slice(1);
  const stories: Story[] = [];
  for (const chunk of chunks) {
    const id = Number(/^[^>]*\bid\s*=\s*["'](\d+)["']/i.exec(chunk)?.[1]);
    const link = /<span\s+class\s*=\s*["']titleline["'][^>]*>\s*(<a\b[^>]*>)([\s\S]*?)<\/a>/i.exec(chunk);
    if (!id || !link) continue;
    const href = attr(link[1], 'href') ?? `item?id=${id}`;
    const points = /<span[^>]*\bclass\s*=\s*["']score["'][^>]*>\s*(\d+)\s+points?/i.exec(chunk)?.[1];
    const comments = /<a[^>]*>\s*(\d+)(?:&nbsp;|\s)+comments?\s*<\/a>/i.exec(chunk)?.[1];
    stories.push({
      id,
      title: htmlToText(link[2]),
      url: new URL(href, `${baseUrl}/`).toString(),
      site: htmlToText(/<span\s+class\s*=\s*["']sitestr["'][^>]*>([\s\S]*?)<\/span>/i.exec(chunk)?.[1] ?? '') || null,
      points: points ? Number(points) : null,
      by: htmlToText(/<a[^>]*\bclass\s*=\s*["']hnuser["'][^>]*>([\s\S]*?)<\/a>/i.exec(chunk)?.[1] ?? '') || null,
      postedAt: /<span[^>]*\bclass\s*=\s*["']age["'][^>]*\btitle\s*=\s*["']([^"' ]+)/i.exec(chunk)?.[1] ?? null,
      comments: comments ? Number(comments) : 0,
    });
  }
  return { stories, more: /\bclass\s*=\s*["']morelink["']/i.test(page) };
}

export interface ReplyForm {
  parent: string;
  goto: string;
  hmac: string;
}

/** The reply form of an item page (`<form action="comment">` with parent, goto and hmac). */
export function parseReplyForm(page: string): ReplyForm | undefined {
  const form = /<form\b[^>]*\baction\s*=\s*["']comment["'][^>]*>([\s\S]*?)<\/form>/i.exec(page)?.[1];
  if (!form) return undefined;
  const fields = new Map<string, string>();
  for (const input of form.matchAll(/<input\b[^>]*>/gi)) {
    const name = attr(input[0], 'name');
    if (name) fields.set(name, attr(input[0], 'value') ?? '');
  }
  const parent = fields.get('parent');
  const hmac = fields.get('hmac');
  return parent && hmac ? { parent, hmac, goto: fields.get('goto') ?? `item?id=${parent}` } : undefined;
}
