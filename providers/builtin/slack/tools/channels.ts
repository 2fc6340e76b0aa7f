import { z } from 'zod';
import { defineTool } from '../../../sdk/index.js';
import { slackRequest } from '../api.js';
import { type SlackChannel, slimChannel } from '../shapes.js';

export const channelTools = [
  defineTool({
    name: 'list_channels',
    description:
      "List Slack channels in the workspace (conversations.list), e.g. to find a channel's id by its name, as {channels:[{id, name, is_private, is_archived, is_member, num_members, topic, purpose}], nextCursor}. types defaults to public channels only (private ones need the groups:read scope). limit defaults to 100 (max 1000); pass nextCursor back as cursor for the next page. Use a channel id with send_message or get_channel_history.",
    access: 'read',
    scopes: ['channels:read'],
    input: z.object({
      types: z
        .array(z.enum(['public_channel', 'private_channel', 'mpim', 'im']))
        .min(1)
        .default(['public_channel'])
        .describe('Conversation types to include'),
      excludeArchived: z.boolean().default(false).describe('Leave out archived channels'),
      limit: z.number().int().min(1).max(1000).default(100).describe('Channels per page (Slack default 100)'),
      cursor: z.string().optional().describe('nextCursor from the previous page'),
    }),
    async run(args, ctx) {
      const result = await slackRequest<{ channels: SlackChannel[]; response_metadata?: { next_cursor?: string } }>(
        ctx,
        'conversations.list',
        { types: args.types.join(','), exclude_archived: args.excludeArchived, limit: args.limit, cursor: args.cursor },
        'read',
      );
      return { channels: result.channels.map(slimChannel), nextCursor: result.response_metadata?.next_cursor || null };
    },
  }),
];
