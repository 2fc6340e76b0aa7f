import express, { type Response } from 'express';
import { hexId, intParam, pageOf, tokenize } from './util.js';

/**
 * An in-memory Slack workspace behind the Web API (https://api.slack.com/web): methods at
 * `/{method}`, arguments as query string, form or JSON body, and every answer HTTP 200 with
 * `{ok:true, ...}` or `{ok:false, error}`, as Slack does.
 */

export interface FakeSlackMessage {
  ts: string;
  user: string;
  text: string;
  threadTs?: string;
  /** A thread reply that is not broadcast: not part of the channel history. */
  hidden?: boolean;
  reactions: { name: string; users: string[] }[];
  replyCount: number;
}

export interface FakeSlackChannel {
  id: string;
  name: string;
  isPrivate: boolean;
  isArchived: boolean;
  members: Set<string>;
  topic: string;
  purpose: string;
  messages: FakeSlackMessage[];
}

export interface FakeSlack {
  team: { id: string; name: string; domain: string };
  channels: FakeSlackChannel[];
  users: Map<string, { id: string; name: string; realName: string; title: string; isBot: boolean }>;
  userIdOf(login: string): string;
  router: express.Router;
}

type Params = Record<string, string | undefined>;
type Method = (params: Params, me: string) => Record<string, unknown>;

class SlackError extends Error {}
const fail = (error: string): never => {
  throw new SlackError(error);
};

const EPOCH = 1_767_225_600; // 2026-01-01T00:00:00Z
const cursorOf = (offset: number) => Buffer.from(`offset:${offset}`).toString('base64');
const offsetOf = (cursor: string | undefined) => {
  if (!cursor) return 0;
  const m = /^offset:(\d+)$/.exec(Buffer.from(cursor, 'base64').toString());
  return m ? Number(m[1]) : fail('invalid_cursor');
};

export function createFakeSlack(): FakeSlack {
  const team = { id: 'T0ACME0001', name: 'Acme', domain: 'acme' };
  const users: FakeSlack['users'] = new Map();
  const userIdOf = (login: string) => {
    const id = `U${hexId(login, 10).toUpperCase()}`;
    if (!users.has(id)) users.set(id, { id, name: login.toLowerCase(), realName: login, title: '', isBot: false });
    return id;
  };
  const alice = userIdOf('alice');
  users.get(alice)!.realName = 'Alice Example';
  users.get(alice)!.title = 'Engineering Manager';

  let clock = 0;
  const nextTs = () => {
    clock++;
    return `${EPOCH + clock}.${String(clock).padStart(6, '0')}`;
  };
  const message = (user: string, text: string): FakeSlackMessage => ({ ts: nextTs(), user, text, reactions: [], replyCount: 0 });
  const channel = (id: string, name: string, extra: Partial<FakeSlackChannel> = {}): FakeSlackChannel => ({
    id,
    name,
    isPrivate: false,
    isArchived: false,
    members: new Set([alice]),
    topic: '',
    purpose: '',
    messages: [],
    ...extra,
  });
  const channels = [
    channel('C0GENERAL01', 'general', {
      topic: 'Company-wide announcements',
      purpose: 'This channel is for team-wide communication.',
      messages: [message(alice, 'Welcome to Acme!'), message(alice, 'The deploy of v2.3 is done :rocket:')],
    }),
    channel('C0RANDOM001', 'random', { messages: [message(alice, 'Lunch at noon?')] }),
    channel('C0ARCHIVE01', 'old-project', { isArchived: true }),
    channel('C0SECRET001', 'leadership', { isPrivate: true }),
  ];

  /** A channel the caller may read: public ones, and private ones they are a member of. */
  const channelOf = (ref: string | undefined, me: string) => {
    const name = ref?.replace(/^#/, '');
    const found = channels.find((c) => c.id === ref || c.name === name);
    if (!found || (found.isPrivate && !found.members.has(me))) return fail('channel_not_found');
    return found;
  };
  const messageOf = (c: FakeSlackChannel, ts: string | undefined) => c.messages.find((m) => m.ts === ts) ?? fail('message_not_found');
  const permalink = (c: FakeSlackChannel, ts: string) => `https://${team.domain}.slack.com/archives/${c.id}/p${ts.replace('.', '')}`;

  const messageJson = (m: FakeSlackMessage) => ({
    type: 'message',
    user: m.user,
    text: m.text,
    ts: m.ts,
    team: team.id,
    ...(m.threadTs ? { thread_ts: m.threadTs } : {}),
    ...(m.replyCount ? { thread_ts: m.ts, reply_count: m.replyCount } : {}),
    ...(m.reactions.length ? { reactions: m.reactions.map((r) => ({ name: r.name, users: r.users, count: r.users.length })) } : {}),
  });
  const channelJson = (c: FakeSlackChannel, me: string) => ({
    id: c.id,
    name: c.name,
    is_channel: !c.isPrivate,
    is_group: false,
    is_im: false,
    is_mpim: false,
    is_private: c.isPrivate,
    is_archived: c.isArchived,
    is_general: c.name === 'general',
    is_member: c.members.has(me),
    created: EPOCH,
    creator: alice,
    name_normalized: c.name,
    num_members: c.members.size,
    topic: { value: c.topic, creator: c.topic ? alice : '', last_set: c.topic ? EPOCH : 0 },
    purpose: { value: c.purpose, creator: c.purpose ? alice : '', last_set: c.purpose ? EPOCH : 0 },
  });

  const methods: Record<string, Method> = {
    'auth.test': (_p, me) => ({
      url: `https://${team.domain}.slack.com/`,
      team: team.name,
      user: users.get(me)!.name,
      team_id: team.id,
      user_id: me,
    }),

    'chat.postMessage': (p, me) => {
      const c = channelOf(p.channel, me);
      if (c.isArchived) fail('is_archived');
      if (!p.text) fail('no_text');
      const m = message(me, p.text!);
      if (p.thread_ts) {
        const parent = messageOf(c, p.thread_ts);
        parent.replyCount++;
        Object.assign(m, { threadTs: parent.ts, hidden: p.reply_broadcast !== 'true' });
      }
      c.members.add(me);
      c.messages.push(m);
      return { channel: c.id, ts: m.ts, message: messageJson(m) };
    },

    'chat.update': (p, me) => {
      const c = channelOf(p.channel, me);
      const m = messageOf(c, p.ts);
      if (m.user !== me) fail('cant_update_message');
      if (!p.text) fail('no_text');
      m.text = p.text!;
      return { channel: c.id, ts: m.ts, text: m.text, message: { ...messageJson(m), edited: { user: me, ts: nextTs() } } };
    },

    'conversations.list': (p, me) => {
      const types = (p.types ?? 'public_channel').split(',');
      const visible = channels.filter(
        (c) =>
          ((types.includes('public_channel') && !c.isPrivate) || (types.includes('private_channel') && c.isPrivate && c.members.has(me))) &&
          !(p.exclude_archived === 'true' && c.isArchived),
      );
      const start = offsetOf(p.cursor);
      const limit = intParam(p.limit, 100, 1000);
      const next = start + limit < visible.length ? cursorOf(start + limit) : '';
      return { channels: visible.slice(start, start + limit).map((c) => channelJson(c, me)), response_metadata: { next_cursor: next } };
    },

    'conversations.history': (p, me) => {
      const c = channelOf(p.channel, me);
      const inclusive = p.inclusive === 'true';
      const inRange = (m: FakeSlackMessage) =>
        (!p.oldest || (inclusive ? m.ts >= p.oldest : m.ts > p.oldest)) && (!p.latest || (inclusive ? m.ts <= p.latest : m.ts < p.latest));
      const newestFirst = c.messages.filter((m) => !m.hidden && inRange(m)).reverse();
      const start = offsetOf(p.cursor);
      const limit = intParam(p.limit, 100, 999);
      const hasMore = start + limit < newestFirst.length;
      return {
        messages: newestFirst.slice(start, start + limit).map(messageJson),
        has_more: hasMore,
        pin_count: 0,
        response_metadata: { next_cursor: hasMore ? cursorOf(start + limit) : '' },
      };
    },

    'search.messages': (p, me) => {
      if (!p.query) fail('no_query');
      const { qualifiers, terms } = tokenize(p.query!);
      const inChannel = qualifiers.find(([k]) => k === 'in')?.[1].replace(/^#/, '');
      const from = qualifiers
        .find(([k]) => k === 'from')?.[1]
        .replace(/^@/, '')
        .toLowerCase();
      const matches = channels
        .filter((c) => (!c.isPrivate || c.members.has(me)) && (!inChannel || c.name === inChannel || c.id === inChannel))
        .flatMap((c) => c.messages.map((m) => ({ c, m })))
        .filter(({ m }) => terms.every((t) => m.text.toLowerCase().includes(t)))
        .filter(({ m }) => !from || users.get(m.user)?.name === from || m.user.toLowerCase() === from);
      if (p.sort === 'timestamp') matches.sort((a, b) => (a.m.ts < b.m.ts ? -1 : 1) * (p.sort_dir === 'asc' ? 1 : -1));
      const count = intParam(p.count, 20, 100);
      const page = intParam(p.page, 1);
      const pages = Math.max(1, Math.ceil(matches.length / count));
      return {
        query: p.query,
        messages: {
          total: matches.length,
          pagination: {
            total_count: matches.length,
            page,
            per_page: count,
            page_count: pages,
            first: (page - 1) * count + 1,
            last: Math.min(page * count, matches.length),
          },
          paging: { count, total: matches.length, page, pages },
          matches: pageOf(matches, page, count).map(({ c, m }) => ({
            iid: hexId(`${c.id}/${m.ts}`, 32),
            team: team.id,
            type: 'message',
            channel: { id: c.id, is_channel: !c.isPrivate, is_private: c.isPrivate, name: c.name },
            user: m.user,
            username: users.get(m.user)?.name ?? m.user,
            ts: m.ts,
            text: m.text,
            permalink: permalink(c, m.ts),
          })),
        },
      };
    },

    'reactions.add': (p, me) => {
      const c = channelOf(p.channel, me);
      const m = messageOf(c, p.timestamp);
      if (!p.name || !/^[a-z0-9_+'-]+$/.test(p.name)) fail('invalid_name');
      const reaction = m.reactions.find((r) => r.name === p.name);
      if (reaction?.users.includes(me)) fail('already_reacted');
      if (reaction) reaction.users.push(me);
      else m.reactions.push({ name: p.name!, users: [me] });
      return {};
    },

    'users.info': (p) => {
      const u = users.get(p.user ?? '') ?? fail('user_not_found');
      return {
        user: {
          id: u.id,
          team_id: team.id,
          name: u.name,
          deleted: false,
          color: '9f69e7',
          real_name: u.realName,
          tz: 'Europe/Berlin',
          tz_label: 'Central European Time',
          tz_offset: 3600,
          profile: {
            title: u.title,
            real_name: u.realName,
            real_name_normalized: u.realName,
            display_name: u.name,
            display_name_normalized: u.name,
            image_72: `https://avatars.slack-edge.com/${u.id}_72.png`,
            team: team.id,
          },
          is_admin: u.id === alice,
          is_owner: false,
          is_bot: u.isBot,
          updated: EPOCH,
        },
      };
    },
  };

  const router = express.Router();
  router.all('/:method', (req, res) => {
    const method = methods[String(req.params.method)];
    if (!method) return res.status(404).json({ ok: false, error: 'unknown_method' });
    const params: Params = {};
    for (const [k, v] of Object.entries({ ...req.query, ...(typeof req.body === 'object' ? req.body : {}) })) {
      if (v !== undefined && v !== null) params[k] = String(v);
    }
    try {
      res.json({ ok: true, ...method(params, userIdOf(res.locals.login)) });
    } catch (err) {
      if (!(err instanceof SlackError)) throw err;
      res.json({ ok: false, error: err.message });
    }
  });

  return { team, channels, users, userIdOf, router };
}

/** Slack's answer to a missing or invalid token: HTTP 200 with ok:false. */
export const slackUnauthorized = (res: Response, hadToken: boolean) =>
  res.json({ ok: false, error: hadToken ? 'invalid_auth' : 'not_authed' });
