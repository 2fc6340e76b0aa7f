import { z } from 'zod';
import { defineTool } from '../../../sdk/index.js';
import { slackRequest } from '../api.js';
import { type SlackMessage, slimMessage } from '../shapes.js';

const channelId = z.string().min(1).describe('Channel id, e.g. "C0123456789" (from list_channels)');
const messageTs = z
  .string()
  .regex(/^\d+\.\d+$/)
  .describe('Message timestamp (its id), e.g. "1712345678.123456"');

export const messageTools = [
  defineTool({
    name: 'send_message',
    description:
      'Post a message to a Slack channel as the connected user or app (chat.postMessage). channel is a channel id from list_channels (a "#name" also works for public channels). text uses Slack mrkdwn (*bold*, _italic_, <https://url|label>, <@U123> mentions). threadTs replies in that message\'s thread. Returns {channel, ts, text}; keep channel and ts to update_message or add_reaction.',
    access: 'write',
    scopes: ['chat:write'],
    input: z.object({
      channel: z.string().min(1).describe('Channel id (e.g. "C0123456789") or "#channel-name"'),
      text: z.string().min(1).max(40000).describe('Message text in Slack mrkdwn'),
      threadTs: messageTs.optional().describe('ts of the parent message, to reply in its thread'),
      replyBroadcast: z.boolean().default(false).describe('With threadTs, also show the reply in the channel'),
    }),
    async run(args, ctx) {
      const result = await slackRequest<{ channel: string; ts: string; message: SlackMessage }>(
        ctx,
        'chat.postMessage',
        {
          channel: args.channel,
          text: args.text,
          thread_ts: args.threadTs,
          reply_broadcast: args.threadTs ? args.replyBroadcast : undefined,
        },
        'write',
      );
      return { channel: result.channel, ts: result.ts, text: result.message.text, ...(args.threadTs ? { thread_ts: args.threadTs } : {}) };
    },
  }),
  defineTool({
    name: 'update_message',
    description:
      "Replace the text of a Slack message the connection posted (chat.update), identified by channel id and ts as returned by send_message. Slack refuses other people's messages (cant_update_message, HTTP 400). Returns {channel, ts, text}.",
    access: 'write',
    scopes: ['chat:write'],
    input: z.object({
      channel: channelId,
      ts: messageTs,
      text: z.string().min(1).max(40000).describe('The new message text in Slack mrkdwn'),
    }),
    async run(args, ctx) {
      const result = await slackRequest<{ channel: string; ts: string; text: string }>(
        ctx,
        'chat.update',
        { channel: args.channel, ts: args.ts, text: args.text },
        'write',
      );
      return { channel: result.channel, ts: result.ts, text: result.text };
    },
  }),
  defineTool({
    name: 'get_channel_history',
    description:
      'Read recent messages of a Slack channel, newest first (conversations.history), as {messages:[{ts, user, text, thread_ts, reply_count, reactions}], hasMore, nextCursor}. limit defaults to 100 (max 999); oldest/latest bound the time range by ts; pass nextCursor back as cursor for older pages. The connection must be a member of private channels.',
    access: 'read',
    scopes: ['channels:history'],
    input: z.object({
      channel: channelId,
      limit: z.number().int().min(1).max(999).default(100).describe('Messages per page (Slack default 100)'),
      oldest: z.string().optional().describe('Only messages after this ts, e.g. "1712345678.000000"'),
      latest: z.string().optional().describe('Only messages before this ts'),
      cursor: z.string().optional().describe('nextCursor from the previous page'),
    }),
    async run(args, ctx) {
      const result = await slackRequest<{
        messages: SlackMessage[];
        has_more?: boolean;
        response_metadata?: { next_cursor?: string };
      }>(ctx, 'conversations.history', args, 'read');
      return {
        messages: result.messages.map(slimMessage),
        hasMore: result.has_more ?? false,
        nextCursor: result.response_metadata?.next_cursor || null,
      };
    },
  }),
  defineTool({
    name: 'search_messages',
    description:
      'Search Slack messages the connected user can see (search.messages; needs a user token). query supports Slack search modifiers such as in:#channel, from:@user, before:2026-01-31, has:link. Returns {total, page, pages, matches:[{channel:{id, name}, ts, user, username, text, permalink}]}, best match first unless sort is "timestamp". count defaults to 20 (max 100).',
    access: 'read',
    scopes: ['search:read'],
    input: z.object({
      query: z.string().min(1).describe('Search text with optional modifiers, e.g. "deploy in:#ops"'),
      count: z.number().int().min(1).max(100).default(20).describe('Matches per page (Slack default 20)'),
      page: z.number().int().min(1).default(1).describe('Page number, starting at 1'),
      sort: z.enum(['score', 'timestamp']).default('score').describe('Rank by relevance or by time'),
      sortDir: z.enum(['asc', 'desc']).default('desc').describe('Sort direction'),
    }),
    async run(args, ctx) {
      const result = await slackRequest<{
        messages: {
          total: number;
          paging?: { page: number; pages: number };
          matches: (SlackMessage & { username?: string; permalink?: string; channel: { id: string; name: string } })[];
        };
      }>(
        ctx,
        'search.messages',
        { query: args.query, count: args.count, page: args.page, sort: args.sort, sort_dir: args.sortDir },
        'read',
      );
      const { total, paging, matches } = result.messages;
      return {
        total,
        page: paging?.page ?? args.page,
        pages: paging?.pages ?? null,
        matches: matches.map((m) => ({
          channel: { id: m.channel.id, name: m.channel.name },
          ts: m.ts,
          user: m.user ?? null,
          username: m.username ?? null,
          text: m.text,
          permalink: m.permalink ?? null,
        })),
      };
    },
  }),
];
