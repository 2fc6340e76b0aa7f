import { z } from 'zod';
import { defineTool } from '../../../sdk/index.js';
import { slackRequest } from '../api.js';

export const reactionTools = [
  defineTool({
    name: 'add_reaction',
    description:
      'Add an emoji reaction to a Slack message (reactions.add), identified by channel id and message ts (from send_message, get_channel_history or search_messages). name is the emoji name without colons, e.g. "thumbsup" or "white_check_mark". Reacting twice with the same emoji fails with already_reacted (HTTP 400). Returns {channel, ts, name}.',
    access: 'write',
    scopes: ['reactions:write'],
    input: z.object({
      channel: z.string().min(1).describe('Channel id of the message, e.g. "C0123456789"'),
      ts: z
        .string()
        .regex(/^\d+\.\d+$/)
        .describe('ts of the message to react to'),
      name: z.string().min(1).describe('Emoji name without colons, e.g. "eyes"'),
    }),
    async run(args, ctx) {
      const name = args.name.replace(/^:|:$/g, '');
      await slackRequest(ctx, 'reactions.add', { channel: args.channel, timestamp: args.ts, name }, 'write');
      return { channel: args.channel, ts: args.ts, name };
    },
  }),
];
