/** The parts of Slack Web API objects the tools read, and the slim rows they return. */

export interface SlackMessage {
  type: string;
  subtype?: string;
  user?: string;
  bot_id?: string;
  text: string;
  ts: string;
  thread_ts?: string;
  reply_count?: number;
  reactions?: { name: string; count: number; users?: string[] }[];
}

export interface SlackChannel {
  id: string;
  name: string;
  is_private?: boolean;
  is_archived?: boolean;
  is_member?: boolean;
  num_members?: number;
  topic?: { value: string };
  purpose?: { value: string };
}

export interface SlackUser {
  id: string;
  name: string;
  real_name?: string;
  deleted?: boolean;
  is_bot?: boolean;
  is_admin?: boolean;
  tz?: string;
  profile?: { display_name?: string; real_name?: string; title?: string; email?: string };
}

export const slimMessage = (m: SlackMessage) => ({
  ts: m.ts,
  user: m.user ?? m.bot_id ?? null,
  text: m.text,
  ...(m.subtype ? { subtype: m.subtype } : {}),
  ...(m.thread_ts ? { thread_ts: m.thread_ts } : {}),
  ...(m.reply_count ? { reply_count: m.reply_count } : {}),
  ...(m.reactions?.length ? { reactions: m.reactions.map((r) => ({ name: r.name, count: r.count })) } : {}),
});

export const slimChannel = (c: SlackChannel) => ({
  id: c.id,
  name: c.name,
  is_private: c.is_private ?? false,
  is_archived: c.is_archived ?? false,
  is_member: c.is_member ?? false,
  num_members: c.num_members ?? null,
  topic: c.topic?.value || null,
  purpose: c.purpose?.value || null,
});

export const slimUser = (u: SlackUser) => ({
  id: u.id,
  name: u.name,
  real_name: u.real_name ?? u.profile?.real_name ?? null,
  display_name: u.profile?.display_name || null,
  title: u.profile?.title || null,
  email: u.profile?.email ?? null,
  tz: u.tz ?? null,
  is_bot: u.is_bot ?? false,
  is_admin: u.is_admin ?? false,
  deleted: u.deleted ?? false,
});
