import { z } from 'zod';
import { defineTool } from '../../../sdk/index.js';
import { slackRequest } from '../api.js';
import { type SlackUser, slimUser } from '../shapes.js';

export const userTools = [
  defineTool({
    name: 'get_user_info',
    description:
      'Look up a Slack user by id (users.info), e.g. the user field of a message: {id, name, real_name, display_name, title, email, tz, is_bot, is_admin, deleted}. email is null unless the connection also has users:read.email. Mention the user in send_message text as <@ID>.',
    access: 'read',
    scopes: ['users:read'],
    input: z.object({ user: z.string().min(1).describe('User id, e.g. "U0123456789"') }),
    async run(args, ctx) {
      const result = await slackRequest<{ user: SlackUser }>(ctx, 'users.info', { user: args.user }, 'read');
      return slimUser(result.user);
    },
  }),
];
