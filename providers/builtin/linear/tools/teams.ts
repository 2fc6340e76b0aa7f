import { z } from 'zod';
import { defineTool } from '../../../sdk/index.js';
import { linearGraphql } from '../api.js';
import { type LinearConnection, type LinearTeam, nextCursor, PAGE_INFO } from '../shapes.js';

const TEAMS = `query Teams($first: Int, $after: String) {
  teams(first: $first, after: $after) {
    nodes { id key name description states { nodes { id name type position } } labels { nodes { id name } } }
    ${PAGE_INFO}
  }
}`;

export const teamTools = [
  defineTool({
    name: 'list_teams',
    description:
      'List the Linear teams the API key can see, each with its workflow states and issue labels (their ids): {teams: [{id, key, name, description, states: [{id, name, type}], labels: [{id, name}]}], nextCursor}. ' +
      'Call this first: create_issue needs a team id, list_issues filters by team key (e.g. "ENG"), and update_issue takes a stateId ' +
      'from states (types: triage, backlog, unstarted, started, completed, canceled) and labelIds from labels. ' +
      'first defaults to 50 (max 250); pass nextCursor as after for the next page (null when there is none).',
    access: 'read',
    scopes: [],
    input: z.object({
      first: z.number().int().min(1).max(250).default(50).describe('Teams per page (default 50, max 250)'),
      after: z.string().min(1).optional().describe('nextCursor of the previous page'),
    }),
    async run(args, ctx) {
      const { teams } = await linearGraphql<{ teams: LinearConnection<LinearTeam> }>(ctx, TEAMS, args);
      return {
        teams: teams.nodes.map((t) => ({
          id: t.id,
          key: t.key,
          name: t.name,
          description: t.description,
          states: [...t.states.nodes].sort((a, b) => a.position - b.position).map((s) => ({ id: s.id, name: s.name, type: s.type })),
          labels: t.labels.nodes.map((l) => ({ id: l.id, name: l.name })),
        })),
        nextCursor: nextCursor(teams.pageInfo),
      };
    },
  }),
];
