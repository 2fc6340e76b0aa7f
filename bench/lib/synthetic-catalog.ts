import { z } from 'zod';
import { ProviderRegistry } from '../../providers/registry.js';
import { defineProvider, defineTool, type Provider, type ToolDefinition } from '../../providers/sdk/index.js';

/**
 * A made-up catalog of any size for search benchmarks: providers named after real services, 50
 * tools each, names verb_noun and descriptions from templates, so names, words and overlaps look
 * like a real catalog's. Deterministic: the same size gives the same catalog.
 */

export const TOOLS_PER_PROVIDER = 50;

const SERVICES = (
  'asana trello notion zendesk hubspot salesforce stripe shopify intercom linear gitlab bitbucket confluence dropbox box ' +
  'gmail outlook zoom teams discord twilio sendgrid mailchimp airtable monday clickup freshdesk pagerduty datadog sentry ' +
  'newrelic okta auth0 workday bamboohr greenhouse lever quickbooks xero netsuite docusign figma miro canva webflow ' +
  'wordpress contentful segment mixpanel amplitude snowflake bigquery redshift mongodb supabase aws gcp azure cloudflare ' +
  'vercel netlify heroku circleci jenkins buildkite opsgenie statuspage typeform surveymonkey calendly eventbrite youtube ' +
  'spotify twitter linkedin facebook instagram reddit medium substack patreon paypal square plaid brex ramp expensify ' +
  'gusto rippling adp servicenow smartsheet basecamp wrike todoist evernote coda loom front helpscout gong outreach ' +
  'zoominfo apollo pipedrive'
).split(' ');

const VERBS = ['list', 'get', 'create', 'update', 'delete', 'search', 'archive', 'assign', 'export', 'share', 'move', 'close'];
const NOUNS = (
  'issue ticket project task comment user team channel message file folder document page invoice payment customer order ' +
  'product contact deal lead event meeting repository branch pull_request build deployment alert incident dashboard report ' +
  'webhook label milestone workspace form survey subscription refund note'
).split(' ');
const FIELDS = ['status', 'owner', 'due date', 'labels', 'title', 'description', 'amount', 'email', 'name', 'priority', 'tags'];
const READ_VERBS = new Set(['list', 'get', 'search', 'export']);

/** A small deterministic PRNG (mulberry32), so catalogs never change between runs. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const words = (noun: string) => noun.replace(/_/g, ' ');
const capital = (s: string) => s[0].toUpperCase() + s.slice(1);

function describeTool(verb: string, noun: string, service: string, pick: <T>(list: T[]) => T): string {
  const thing = words(noun);
  const svc = capital(service);
  const field = pick(FIELDS);
  switch (verb) {
    case 'list':
      return `List ${thing}s in ${svc}, newest first; filter by ${field} and page through the results.`;
    case 'get':
      return `Get one ${thing} from ${svc} by its id, with its ${field} and ${pick(FIELDS)}.`;
    case 'search':
      return `Search ${svc} ${thing}s by keywords or ${field}; answers the best matches first.`;
    case 'create':
      return `Create a ${thing} in ${svc} with a ${field} and an optional ${pick(FIELDS)}.`;
    case 'update':
      return `Change the ${field} or ${pick(FIELDS)} of an existing ${svc} ${thing}.`;
    case 'delete':
      return `Delete a ${thing} from ${svc} for good. This cannot be undone.`;
    default:
      return `${capital(verb)} a ${svc} ${thing}, keeping its ${field}.`;
  }
}

function syntheticProvider(index: number): Provider {
  const base = SERVICES[index % SERVICES.length];
  const round = Math.floor(index / SERVICES.length);
  const service = round ? `${base}${round + 1}` : base;
  const pick = (() => {
    const next = random(index + 1);
    return <T>(list: T[]) => list[Math.floor(next() * list.length)];
  })();
  const input = z.object({ id: z.string().optional(), query: z.string().optional() });
  const names = new Set<string>();
  const tools: ToolDefinition[] = [];
  while (tools.length < TOOLS_PER_PROVIDER) {
    const verb = pick(VERBS);
    const noun = pick(NOUNS);
    const name = `${verb}_${noun}${verb === 'list' || verb === 'search' ? 's' : ''}`;
    if (names.has(name)) continue;
    names.add(name);
    tools.push(
      defineTool({
        name,
        description: describeTool(verb, noun, service, pick),
        access: READ_VERBS.has(verb) ? 'read' : 'write',
        input,
        run: async () => {
          throw new Error('synthetic tool');
        },
      }),
    );
  }
  return defineProvider(
    {
      name: service,
      version: '1.0.0',
      displayName: capital(service),
      description: `${capital(service)} ${pick(NOUNS)}s, ${pick(NOUNS)}s and ${pick(NOUNS)}s`,
      auth: 'apikey',
      envPrefix: service.toUpperCase(),
      toolPrefix: service,
    },
    tools,
  );
}

/** A registry of `tools` synthetic tools (a multiple of TOOLS_PER_PROVIDER). */
export function syntheticRegistry(tools: number): ProviderRegistry {
  const providers = Array.from({ length: Math.ceil(tools / TOOLS_PER_PROVIDER) }, (_, i) => syntheticProvider(i));
  return new ProviderRegistry(providers);
}

/** What agents search for: plain, with a service, abbreviations, and typos (fuzzy matching). */
export const QUERIES = [
  'list issues',
  'create jira ticket',
  'send slack message',
  'stripe refund',
  'github repos',
  'search contacts in hubspot',
  'upload a file to dropbox',
  'delete calendar event',
  'close incident',
  'invoice',
  'assign task to user',
  'list PRs',
  'schedule zoom meeting',
  'export report',
  'archve projct',
  'get customer by email',
];
