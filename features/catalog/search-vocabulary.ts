/**
 * The words people use for what a tool does, mapped onto the words tool names use. Requests say
 * "file a bug", "reply to the ticket", "who am I"; tools are named `create_issue`, `add_comment`,
 * `get_authenticated_user`. Fixed tables, no model: the same request always reads the same way.
 */

import { wordTable } from './search-terms.js';

/** What a tool does, read off its name: `list_issues` lists, `add_comment` comments. */
export type Operation =
  | 'list'
  | 'get'
  | 'search'
  | 'create'
  | 'update'
  | 'delete'
  | 'send'
  | 'comment'
  | 'merge'
  | 'assign'
  | 'transition'
  | 'react'
  | 'open'
  | 'screenshot'
  | 'extract'
  | 'whoami'
  | 'run'
  | 'toggle';

/** A tool name's words that say its operation; the first such word is its main one. */
export const NAME_OPERATIONS = wordTable<Operation>({
  list: 'list',
  get: 'get',
  read: 'get',
  fetch: 'get',
  retrieve: 'get',
  describe: 'get',
  history: 'list',
  search: 'search',
  find: 'search',
  query: 'search',
  create: 'create',
  add: 'create',
  new: 'create',
  submit: 'create',
  post: 'create',
  insert: 'create',
  update: 'update',
  edit: 'update',
  change: 'update',
  set: 'update',
  patch: 'update',
  rename: 'update',
  delete: 'delete',
  remove: 'delete',
  archive: 'delete',
  send: 'send',
  comment: 'comment',
  reply: 'comment',
  merge: 'merge',
  assign: 'assign',
  transition: 'transition',
  move: 'transition',
  reaction: 'react',
  react: 'react',
  open: 'open',
  browse: 'open',
  navigate: 'open',
  screenshot: 'screenshot',
  extract: 'extract',
  scrape: 'extract',
  authenticated: 'whoami',
  profile: 'whoami',
  whoami: 'whoami',
  run: 'run',
  trigger: 'run',
  start: 'run',
  execute: 'run',
  launch: 'run',
  invoke: 'run',
  toggle: 'toggle',
  enable: 'toggle',
  disable: 'toggle',
});

type Weighted = Partial<Record<Operation, number>>;

/**
 * Request words → the operations they ask for, with how surely. Words here are intent, not
 * subject: they steer the operation and are not matched against descriptions (except the ones
 * that are also nouns of tools, marked in KEEP_AS_TEXT).
 */
export const INTENT_WORDS = wordTable<Weighted>({
  // get: one thing, in full
  detail: { get: 1 },
  details: { get: 1 },
  info: { get: 1 },
  information: { get: 1 },
  describe: { get: 1 },
  read: { get: 1 },
  view: { get: 0.8 },
  see: { get: 0.6, list: 0.4 },
  show: { get: 0.6, list: 0.6 },
  what: { get: 0.6, list: 0.3 },
  whats: { get: 0.6, list: 0.3 },
  contain: { get: 1 },
  contents: { get: 1 },
  content: { get: 0.8 },
  get: { get: 1 },
  fetch: { get: 0.8, open: 0.4 },
  retrieve: { get: 1, list: 0.3 },
  check: { get: 0.8 },
  inspect: { get: 1 },
  examine: { get: 1 },
  display: { get: 0.6, list: 0.6 },
  lookup: { get: 0.6, search: 0.8 },
  // list: many
  list: { list: 1 },
  all: { list: 0.8 },
  which: { list: 0.8 },
  every: { list: 0.8 },
  anywhere: { search: 0.6 },
  enumerate: { list: 1 },
  recent: { list: 0.6 },
  lately: { list: 0.6 },
  latest: { list: 0.5 },
  last: { list: 0.5 },
  newest: { list: 0.5 },
  oldest: { list: 0.5 },
  exist: { list: 0.6 },
  // search: by words or conditions
  search: { search: 1 },
  find: { search: 1 },
  grep: { search: 1 },
  query: { search: 0.8 },
  mentioning: { search: 1 },
  mention: { search: 0.8 },
  assigned: { search: 0.5, list: 0.4 },
  authored: { search: 0.8 },
  through: { search: 0.5 },
  across: { search: 0.6 },
  labeled: { search: 0.5, list: 0.4 },
  tagged: { search: 0.5, list: 0.4 },
  locate: { search: 1 },
  filter: { search: 0.8 },
  matching: { search: 0.8 },
  containing: { search: 0.8 },
  backlog: { list: 0.6 },
  pull: { extract: 0.6 },
  ditch: { delete: 1 },
  return: { get: 0.6 },
  nuke: { delete: 1 },
  grab: { get: 0.8, extract: 0.4 },
  dump: { get: 0.8, list: 0.4 },
  // create
  create: { create: 1 },
  new: { create: 0.8 },
  file: { create: 0.6 },
  raise: { create: 1 },
  report: { create: 0.8 },
  log: { create: 0.6, list: 0.3 },
  make: { create: 1 },
  submit: { create: 1 },
  compose: { create: 1 },
  draft: { create: 0.8 },
  generate: { create: 0.8 },
  record: { create: 0.6 },
  register: { create: 0.8 },
  save: { create: 0.8 },
  store: { create: 0.8 },
  remember: { create: 1 },
  remind: { create: 1 },
  jot: { create: 0.6 },
  write: { create: 0.8, send: 0.3 },
  add: { create: 0.6, update: 0.4 },
  open: { create: 0.5, open: 0.5 },
  commit: { create: 0.5, update: 0.5 },
  push: { create: 0.5, update: 0.5 },
  // update
  update: { update: 1 },
  edit: { update: 1 },
  change: { update: 1 },
  modify: { update: 1 },
  set: { update: 0.8 },
  rename: { update: 1 },
  relabel: { update: 1 },
  reopen: { update: 0.8, transition: 0.8 },
  close: { update: 0.7, transition: 0.8 },
  correct: { update: 1 },
  alter: { update: 1 },
  adjust: { update: 1 },
  amend: { update: 1 },
  tweak: { update: 1 },
  revise: { update: 1 },
  retitle: { update: 1 },
  replace: { update: 0.8 },
  overwrite: { update: 1 },
  prioritize: { update: 0.8 },
  reprioritize: { update: 1 },
  bump: { update: 0.8 },
  increase: { update: 0.8 },
  decrease: { update: 0.8 },
  fix: { update: 0.8 },
  rewrite: { update: 1 },
  tidy: { update: 1 },
  reword: { update: 1 },
  rephrase: { update: 1 },
  append: { update: 1 },
  prepend: { update: 1 },
  // delete
  delete: { delete: 1 },
  remove: { delete: 1 },
  erase: { delete: 1 },
  discard: { delete: 1 },
  trash: { delete: 1 },
  rid: { delete: 1 },
  throw: { delete: 1 },
  destroy: { delete: 1 },
  purge: { delete: 1 },
  wipe: { delete: 1 },
  scrap: { delete: 1 },
  // send
  send: { send: 1 },
  post: { send: 0.8, comment: 0.5, create: 0.3 },
  notify: { send: 1 },
  share: { send: 1 },
  tell: { send: 1 },
  ping: { send: 1 },
  announce: { send: 1 },
  broadcast: { send: 1 },
  inform: { send: 1 },
  forward: { send: 0.8 },
  message: { send: 0.6 },
  msg: { send: 0.6 },
  dm: { send: 1 },
  say: { send: 0.4, search: 0.3 },
  // comment
  comment: { comment: 1 },
  reply: { comment: 1, send: 0.5 },
  respond: { comment: 1 },
  answer: { comment: 0.8 },
  feedback: { comment: 0.8 },
  // the rest
  merge: { merge: 1 },
  land: { merge: 1 },
  ship: { merge: 0.8 },
  squash: { merge: 1 },
  rebase: { merge: 0.8 },
  assign: { assign: 1 },
  unassign: { assign: 1 },
  reassign: { assign: 1 },
  ownership: { assign: 1 },
  give: { assign: 0.8 },
  delegate: { assign: 1 },
  transition: { transition: 1 },
  move: { transition: 1 },
  mark: { transition: 0.8 },
  resolve: { transition: 1 },
  advance: { transition: 1 },
  complete: { transition: 0.8, update: 0.4 },
  finish: { transition: 0.8, update: 0.4 },
  status: { transition: 0.5, get: 0.3 },
  react: { react: 1 },
  emoji: { react: 1 },
  acknowledge: { react: 0.8 },
  visit: { open: 1 },
  browse: { open: 1 },
  load: { open: 0.8 },
  navigate: { open: 1 },
  screenshot: { screenshot: 1 },
  capture: { screenshot: 1 },
  snapshot: { screenshot: 1 },
  snap: { screenshot: 0.8 },
  extract: { extract: 1 },
  scrape: { extract: 1 },
  harvest: { extract: 1 },
  whoami: { whoami: 1 },
  // run: set something going
  run: { run: 1 },
  trigger: { run: 1 },
  launch: { run: 1 },
  execute: { run: 1 },
  invoke: { run: 1 },
  start: { run: 0.8, toggle: 0.6 },
  // toggle: switch a setting on or off
  toggle: { toggle: 1 },
  enable: { toggle: 1 },
  disable: { toggle: 1 },
  activate: { toggle: 1 },
  deactivate: { toggle: 1 },
  silence: { toggle: 1 },
  mute: { toggle: 1 },
  unmute: { toggle: 1 },
  pause: { toggle: 0.8 },
  resume: { toggle: 0.8 },
  stop: { toggle: 0.6 },
});

/** ".product-title" is a CSS class (the browser's extract); ".gz" or ".json" is a kind of file. */
export const CSS_CLASS =
  /(?:^|\s)\.(?!(?:gz|zip|tar|tgz|json|csv|txt|md|pdf|png|jpe?g|gif|svg|html?|xml|ya?ml|log|ts|js|py)\b)[a-z][\w-]*(?![\w-]*\/)/;

/**
 * "notes about taxes", "what notes do I have about taxes", "my note about the gate code": things found by their subject, which is a
 * value to look for rather than words of a tool ("a bug about the crash" is one to make, "ping the
 * channel about the release" a message to send).
 */
export const TOPIC_CLAUSE =
  /(?:(?<!\b(?:ping|tell|message|msg|dm|notify|remind|email|ask|warn|alert|inform|update|slack) )\b(?:my|the|any|some|our) [a-z]+|\b[a-z]{3,}s(?: (?:do|did|have|has|i|we|you|they|there|are|is|was|were|talk|talks|say|says|said|go|goes|discuss|discusses)){0,3}) (?:about|regarding|concerning|mentioning) (?!#?\d|[a-z][a-z0-9]+-\d)((?:the |my |our )?[a-z]{3,}.*)$/i;

/**
 * What a thing to make or send is about ("a linear issue about slow search", "ping the channel about
 * the release"): its content, a value rather than words of a tool.
 */
export const CONTENT_CLAUSE =
  /\b(?:a|an|new|the) (?:[a-z]+ ){0,2}[a-z]+ (?:about|regarding|concerning) (?!#?\d|[a-z][a-z0-9]+-\d)((?:the |my |our )?[a-z]{3,}.*)$/i;

/** Phrases read before single words, so "who am I" is one intent and not three words. */
export const INTENT_PHRASES: [RegExp, Weighted][] = [
  [
    /\b(?:who|which \w+|what \w+) am i\b|\bwho i am\b|\bmy (?:\w+ )?(?:account|username|login|profile|karma)\b|\bwhich \w+ (?:user|account) is connected\b/,
    { whoami: 1.5 },
  ],
  [/\blook (?:for|through)\b/, { search: 1 }],
  [/\blook up\b/, { get: 0.6, search: 0.8 }],
  [/\brun (?:a |an |the )?(?:\w+ )?query\b/, { search: 1 }],
  [/\b(?:note|comment|reply) (?:on|to)\b/, { comment: 1 }],
  [/\bget rid of\b|\bthrow away\b/, { delete: 1.5 }],
  [/\bwrite down\b|\bjot down\b/, { create: 1.5 }],
  [/\blooks? like\b/, { screenshot: 1.5 }],
  [/\bcatch (?:\w+ )?up\b/, { list: 1 }],
  // "slack the team that …": Slack as a verb is a message.
  [/^slack (?:the |my |our |everyone\b|@)/, { send: 1.5 }],
  [/\bmove .* to\b|\bmark .* as\b/, { transition: 0.5 }],
  [/\b(?:start|begin|stop) (?:work|working|progress) on\b/, { transition: 1.5 }],
  [/\bput \S+(?: \S+)? (?:in|into) (?!the\b|a\b|my\b)\w+/, { transition: 1.2 }],
  // "open github PR 5", "open PROJ-200": a thing named by its number or key is to be looked at.
  [/\bopen (?:\w+ ){0,2}(?:#?\d+|[a-z][a-z0-9]+-\d+|[a-z]+_[a-z0-9]*\d[a-z0-9]*)\b/, { get: 1.2 }],
  [/\blook at\b/, { get: 1 }],
  [/\bwhat (?:was|did) .* say\b|\bwhat was said\b/, { list: 0.5 }],
  [/\bopen (?:a|an|new)\b/, { create: 1 }],
  [/\bopen (?:https?:|www\.)/, { open: 1.5 }],
  [/\bhow (?:much|many)\b/, { get: 0.6 }],
  [/(?:^|\s):[a-z0-9_+-]+:/, { react: 1.2 }],
  [new RegExp(`${CSS_CLASS.source}|\\belements?\\b`), { extract: 1 }],
  [/\bgit log\b/, { list: 1.5 }],
  [/\bwhat(?:'s| is) (?:the|in)\b/, { get: 0.8 }],
  [
    /\bopen (?:\w+ )?(?:issues|prs|tickets|bugs)\b|\bare (?:still |currently |now )?open\b|\b(?:issues|prs|tickets|bugs|pull requests) (?:still |currently )?open\b/,
    { list: 0.8, search: 0.6 },
  ],
  [/\bopen (?:my|the|this|that)\b/, { get: 0.8 }],
  // "is acme/web#19 still open?": a question about one thing's state.
  [
    /\bis (?:\S+ ){1,5}(?:still |currently |now )?(?:open|closed|merged|mergeable|done|resolved|a draft|draft|approved|blocked|in progress|in review)\b/,
    { get: 1 },
  ],
  // "open PRs across the acme org", "issues I'm assigned across all my repositories": a search of them all.
  [/\bacross (?:the |all |all of |my |our |every )*(?:[\w-]+ )?(?:orgs?|organizations?|repos|repositories|projects)\b/, { search: 1.5 }],
  // "I'll take PLAT-20", "put it under my name": its assignee.
  [/\bi'?ll take\b|\bput (?:it|this|that|\S+) under (?:my|\w+'s) name\b|\btake (?:it )?over\b/, { assign: 1.5 }],
  // "can SHIP-7 go straight to Closed?": whether that transition exists.
  [/^can [a-z][a-z0-9]+-\d+ (?:go|move|be moved|transition)\b/, { list: 1.5 }],
  // "all the h2 headings from https://…": parts of a page, extracted.
  [/\bh[1-6]\b|\b(?:all|every) (?:the |of the )?[\w-]+(?: [\w-]+)? (?:from|on|off) (?:https?:|www\.)/, { extract: 1.2 }],
  // "an image of how the checkout renders": a picture of the page.
  [/\ban? (?:image|picture|screenshot|snapshot) of\b|\bhow (?:\S+ ){1,6}(?:renders?|appears?)\b/, { screenshot: 1.2 }],
  // "when did dang create their account": a question about one thing.
  [/\bwhen (?:did|was|were|is|does)\b/, { get: 1 }],
  // "PRs where my review is requested": found by a search condition.
  [/\breview (?:is |was |been )?requested\b|\brequested (?:my |a )?review\b|\bawaiting (?:my )?review\b/, { search: 1.2 }],
  [/\bgo to\b/, { open: 1.2 }],
  [/\bwrite to\b/, { send: 1.2 }],
  [/\b(?:change|set|update) (?:the )?status\b/, { transition: 1.5 }],
  [/\b(?:change|set|update) (?:the )?assignee\b/, { assign: 1.5 }],
  [/\b(?:turn|switch) (?:\S+ ){0,3}(?:on|off)\b/, { toggle: 1.5 }],
  [/\bleave (?:a |an |some |my )?(?:feedback|comment|note|review|reply)\b/, { comment: 1.5 }],
  [/\bpost (?:a |an |my )?(?:update|note|comment|reply) (?:on|to)\b/, { comment: 1.5 }],
  [/\b(?:which|what) (?:\w+ )?(?:account|identity|login)\b/, { whoami: 1.2 }],
  // "PRs by octocat", "issues opened by me": filtered by author.
  [/\b(?:prs?|pull requests?|issues?|tickets?|messages?|commits?|stories|posts?|notes?) (?:\w+ )?by (?!\w+ing\b)/, { search: 1 }],
  // "… that were merged", "… that are closed": filtered by state.
  [/\bthat (?:are|were|is|was|have been) (?:not )?\w+/, { search: 0.6 }],
  [/\bwhat (?:have|did) (?:i|we) (?:\w+ )?\w+ed\b/, { list: 1 }],
  [/\bwho (?:is|are)\b/, { get: 0.8 }],
  // "is there an issue about …", "do I have any open PRs": whether such things exist.
  [/\b(?:is there|are there)\b/, { search: 0.8, list: 0.6 }],
  [/\bdo (?:i|we|you) have\b/, { list: 0.8 }],
  [/\blet (?:\S+ ){1,4}know\b/, { send: 1.5 }],
  [/\bthumbs?[ -]?(?:up|down)\b/, { react: 1.2 }],
  [/\btake (?:a |an |some )?notes?\b/, { create: 1.5 }],
  [/\b(?:raise|lower|bump|increase|decrease) (?:the |its )?(?:priority|estimate|due date)\b/, { update: 1.5 }],
  [/\bkick (?:\w+ )?off\b/, { run: 1.5 }],
  [/\bhand (?:\S+ ){0,3}(?:over|off)\b/, { assign: 1.5 }],
  [/\bfollow up on\b/, { comment: 1 }],
  [/\b(?:track|hunt) (?:\S+ )?(?:down|for)\b|\bdig (?:\S+ )?(?:out|up|through|into|for)\b/, { search: 1 }],
  [/\bheads[- ]up\b/, { send: 1.5 }],
  [/\bput in (?:a|an)\b/, { create: 1.2 }],
  [/\bsay (?:\S+ ){1,3}on\b/, { comment: 1.2 }],
  // "PRs waiting on me", "issues I opened": filtered by who they concern.
  [/\bwaiting (?:on|for) (?:me|my)\b|\b(?:i|me) (?:opened|created|filed|wrote|authored|reported|raised)\b/, { search: 1 }],
  // "where can ABC-7 go from here": the transitions it has.
  [/\bwhere can \S+ (?:go|move)\b|\b(?:go|move) (?:next|from here)\b/, { list: 1, transition: 0.8 }],
  [/\bsend [a-z][a-z0-9]+-\d+ (?:back )?to\b/, { transition: 1.5 }],
  [/\b(?:take|grab|snap|get) (?:a |an )?(?:picture|photo|snapshot|screen ?shot|screen ?grab|image)\b/, { screenshot: 1.5 }],
  [/\bselectors?\b/, { extract: 1 }],
  // "PROJ-12 assigned to them": one thing given to someone, not things filtered by assignee.
  [/\b[a-z][a-z0-9]+-\d+ (?:\w+ )?assigned to\b/, { assign: 1.5 }],
  [/\bqueue (?:up )?(?:a|an)\b/, { create: 1 }],
  [/\bclean up\b/, { delete: 0.8, update: 0.6 }],
  [/\bset up\b|\bspin up\b|\bwrite up\b/, { create: 1 }],
  [/\bopen [a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|org|net|io|dev)\b/, { open: 1.5 }],
  // "which statuses can PROJ-4 move to", "possible next states": the transitions it has.
  [
    /\b(?:which|what|possible|available|valid|allowed|next)\b (?:\w+ ){0,2}(?:statuses|states|transitions)\b/,
    { list: 1.4, transition: 0.6 },
  ],
  // "jira assignee change", "priority update": the thing changed named before the change.
  [/\bassignee (?:change|update|swap)\b/, { assign: 1.5 }],
  // "notes about taxes", "my note about the gate code": things found by their subject ("a bug about
  // the crash" is one to make).
  [TOPIC_CLAUSE, { search: 1 }],
  // "everything I've noted so far": all of them.
  [/\bso far\b|\b(?:everything|all) (?:that )?(?:i|we)(?:'ve| have)? \w+ed\b/, { list: 1 }],
  // "what is the id of the #ops channel": an id is looked up among them.
  [/\bids? (?:of|for)\b/, { list: 1 }],
  // "start a note called …": a new one.
  [
    /\bstart (?:a|an|new|a new) (?:\w+ )?(?:note|issue|ticket|thread|draft|list|message|conversation|discussion|doc|document|pr|pull request)\b/,
    { create: 1.5 },
  ],
  // "did anyone on Slack talk about …": a search of what was said.
  [
    /\b(?:did|has|have) (?:anyone|anybody|someone|somebody|people)\b(?: \S+){0,3} (?:talk|talked|mention|mentioned|say|said|discuss|discussed|bring|brought|ask|asked)\b/,
    { search: 1.5 },
  ],
  // "jira OPS-318 -> In Review": moved to that status.
  [/\s(?:->|→|=>)\s/, { transition: 1.5 }],
  // "chime in on acme/api#150 that …", "let the reporter know on SUP-120 …": a comment on that thing.
  [
    /\b(?:let|tell) (?:\S+ ){0,2}on (?:\w+ ){0,3}(?:#?\d+|[a-z][a-z0-9]+-\d+|[\w.-]+\/[\w.-]+#\d+)\b.*\bknow\b|\b(?:chime in|weigh in|let(?: \S+){1,3} know|tell(?: \S+){1,2}|say|mention|note|reply|respond)\b(?: \S+){0,4}? on (?:\w+ ){0,3}(?:#?\d+|[a-z][a-z0-9]+-\d+|[\w.-]+\/[\w.-]+#\d+)\b/,
    { comment: 1.6 },
  ],
  [/\b(?:chime|weigh) in\b/, { comment: 1.2 }],
  // "slap a needs-triage label on …", "tag OPS-7 with the postmortem label": a label put on it.
  [/\b(?:slap|put|stick|tag|apply|attach)\b.*\blabels?\b/, { update: 1.2 }],
  // "who reported OPS-1142": one thing's reporter, a detail of it.
  [/\bwho (?:reported|created|filed|opened|raised|owns|wrote)\b/, { get: 1.2 }],
  // "what's going on in acme/web#482": one thing's state.
  [/\bwhat(?:'s| is) (?:going on|happening|up) (?:in|with|on)\b/, { get: 1 }],
  // "has anyone commented on INFRA-12": a question about one thing's state.
  [/\b(?:has|have) (?:anyone|anybody|someone|somebody|people|they)\b/, { get: 0.8, list: 0.6 }],
  // "put me on INFRA-310": its assignee.
  [/\bput (?:me|\w+) on (?:\w+ )?(?:[a-z][a-z0-9]+-\d+|#?\d+)\b/, { assign: 1.5 }],
  // "knock MOB-33 down to low priority": its priority changed.
  [
    /\b(?:to|at) (?:a )?(?:low|lowest|high|highest|medium|urgent|no|normal) priority\b|\bpriority (?:to|of) (?:low|high|medium|urgent)\b/,
    { update: 1.2 },
  ],
  // "how the hero section of acme.io looks": a picture of it.
  [/\bhow (?:\S+ ){1,6}looks?\b/, { screenshot: 1.5 }],
  // "make it stop", "shut it off": a setting switched off.
  [/\bmake (?:it|them|this|that) stop\b|\bshut (?:it |them |this )?(?:off|up)\b/, { toggle: 1.5 }],
  // "show me every note I've got": all of them.
  [/\b(?:i've|i have|we've|we have) got\b/, { list: 0.8 }],
  // "what's sitting in Todo": the things in a state.
  [/\bsitting in\b/, { list: 0.8, search: 0.6 }],
  // "add oat milk to my grocery list note": something put into a thing changes it.
  [/\badd (?!:)(?:\S+ ){1,5}to (?:my|the|that|this|our) (?:\S+ ){0,3}(?:note|issue|ticket|message|description|pr)\b/, { update: 1.2 }],
  // "jira DATA-19 priority highest": a field given a value.
  [/\b[a-z][a-z0-9]+-\d+ (?:priority|title|summary|labels?)\b/, { update: 1.2 }],
  // "put APP-501 to done": a status.
  [/\b(?:to|as|into) (?:done|closed|resolved|in progress|in review|todo|to do|blocked)\b/, { transition: 1 }],
  // "add the label x to issue 14", "add a tag to my note": something put on a thing changes it.
  [
    /\b(?:add|remove|wipe|clear|strip|drop|set|change) (?:a |an |the |all |its )?(?:'[^']*' |"[^"]*" |[\w-]+ )?(?:labels?|tags?|assignees?|priority|due date)\b/,
    { update: 1.2 },
  ],
];

/** Intent words that are also things tools work on: matched as text too. */
export const KEEP_AS_TEXT = new Set([
  'comment',
  'message',
  'file',
  'history',
  'status',
  'content',
  'contents',
  'screenshot',
  'emoji',
  'merge',
  'transition',
  'log',
  'commit',
  'push',
  'post',
  'report',
  'backlog',
  'recent',
  'authored',
]);

/** Intent words that describe what is asked for and are never its verb: text even as the first word. */
export const DESCRIBING_WORDS = new Set(['recent']);

/** Intent words that are verbs only as the request's first word ("message Bob …", "an error message"). */
export const NOUNS_FIRST = new Set(['message', 'msg', 'content']);

/** Verbs that lend their noun the operation: `add_comment` comments, `add_reaction` reacts. */
export const LIGHT_VERBS = new Set(['add', 'submit', 'post']);

/** Phrases read as one thing before words are looked up. */
export const REWRITES: [RegExp, string][] = [
  // "please", "can you", "I'd like to": the request starts after them.
  [
    /^(?:\s*(?:please|pls|kindly|hey|ok|so|now|can you|could you|would you|will you|i'd like to|i would like to|i want to|i need to|need to|help me|let's|lets|go ahead and|(?:the )?user (?:wants|asked|asks|needs|would like)(?: me| you)?(?: to)?(?: know)?|the agent should|agent(?: step)?:)(?:\b|(?<=:))[\s,:]*)+/i,
    '',
  ],
  [/\b(?:pull|merge) requests?\b/gi, 'PR'],
  [/\bwhat's\b/gi, 'what is'],
  [/\b(?:git|commit) log\b/gi, 'list commits'],
  // "catch me up on #product": read what was said there.
  [/\bcatch (?:me |us )?up (?:on|with)\b/gi, 'read the history of'],
  // "scroll back through #random": read its history.
  [/\bscroll (?:back|up)(?: through| in)?\b/gi, 'history of'],
  // "what's on my plate": what is assigned to me.
  [/\bon my plate\b/gi, 'assigned to me'],
  [/\bgrep\b/gi, 'search code'],
  // "are there new commits", "what's new in #x": new ones, not a new one to make.
  [/\b(are there|is there|any|anything|what is|what are) new\b/gi, '$1 recent'],
  // "find out who U02ABC is", "figure out who I am": a question, not a search.
  [/\b(?:find|figure) out\b/gi, 'show'],
  // "the newest commit message": the newest commit.
  [/\bcommit messages?\b/gi, 'commits'],
  // "note to self: renew passport": a note.
  [/\bnote to self\b/gi, 'create a note'],
  // "history of changes to docs/setup.md": the commits that touched it.
  [/\b(?:change history|history of changes)\b/gi, 'list commits for'],
  // "get the list of slack channels": list them.
  [/\b(?:get|show|give|fetch|see)(?: me)? (?:the |a )?(?:full |whole )?list of\b/gi, 'list'],
  // "note on PROJ-5 that QA passed": a comment on that issue, not a note of one's own.
  [/^note (on|to) (?=#?\d|[A-Z][A-Z0-9]+-\d|(?:the |this |that )?(?:issue|ticket|bug|pr)\b)/i, 'comment $1 '],
  // "the last messages in #deploys", "what did people say in #general": what was said there lately.
  [/\b(?:last|latest|newest) (?=(?:\d+ )?(?:messages|posts|chatter|conversations?|discussions?)\b)/gi, 'recent '],
  [
    /\bwhat (?:did|have|has) (?:people|everyone|everybody|folks|they|the team) (?:been )?(?:say|said|saying|post|posted|posting|talk|talked|talking|discuss|discussed|discussing)\b/gi,
    'recent messages',
  ],
  // "messages posted in #deploys": where they were posted, not something to post.
  [/\b(?:posted|sent|said|written) (?=(?:in|on|to) #)/gi, ''],
  // "issues I opened": authored by me, a search (the verb is no subject word).
  [/\b(?:i|we) (?:opened|created|filed|wrote|authored|reported|raised)\b/gi, 'authored by me'],
  // "file that as a bug", "log it in Linear": make one of it.
  [/\b(?:file|log|raise|report) (?:it|that|this|them)\b(?: as)?/gi, 'create'],
  // "get it up for review against develop": a pull request.
  [/\b(?:get|put|send) (?:it|this|that|them|the branch) up for review\b/gi, 'create a PR'],
  // "what did I write about the Berlin trip": find what was written.
  [
    /\bwhat (?:did|have) (?:i|we) (?:write|written|wrote|say|said|note|noted|save|saved|jot|jotted|put)(?: down)?(?= about\b)/gi,
    'find what i noted',
  ],
  [
    /\bwhat (?:did|have) (?:i|we) (?:write|written|wrote|say|said|note|noted|save|saved|jot|jotted)(?: down)?\b(?! in (?:the |my )?(?:note )?[\w-]*\d)/gi,
    'list what i noted',
  ],
  // "did anyone push to main": the commits on it.
  [
    /\b(?:did|has|have) (?:anyone|anybody|someone|somebody|\w+) (?:push|pushed|commit|committed) (?:anything )?(?:to|on)\b/gi,
    'list commits to',
  ],
  // GitHub search qualifiers ("assignee:none", "state:open") are values, not words or verbs.
  [/\b(?:assignee|author|state|label|is|type|status|sort|review|mentions|involves|language|user|org|no):\S+/gi, ' '],
  // "the default branch of acme/web", "its star count": a repository's attributes are its details.
  [
    /\b(?:(?:the|its) )?(?:default branch|stars?|star count|stargazers|primary language|main language|topics|visibility|license|fork count|forks)\b(?=(?: \w+)? (?:of|for|on|in) [\w.-]+\/[\w.-]+)/gi,
    'repo details',
  ],
  // "the head sha of the release-2.3 branch": where a branch points, as the branches list it.
  [/\b(?:the )?(?:head |tip |latest )?(?:sha|head commit) (?:of|on|for) (?:the )?(?:[\w./-]+ )?branch\b/gi, 'list branches'],
  // "I pushed fix-typo to octo/docs, can you put up a PR for it?": the ask follows the context.
  [/^([^,]{8,}?),\s*(?:so\s+)?(?:can|could|would|will) you\b(.*)$/i, '$2, $1'],
  // "jot down: call the landlord about the radiator": what follows the colon is the note.
  [/^(jot down|write down|note|remember|reminder|todo|to-do|memo)\s*:.*$/i, '$1 a note'],
  // "did I write anything down about the dentist": find what was written.
  [/\bdid (i|we) (write|note|jot|save|put)(?: anything| something)?(?: down)?\b/gi, 'find what $1 $2'],
  // "what's the channel id for #x": ids are looked up by listing.
  [/\bwhat(?:'s| is) the (\w+ )?(?:ids?|keys?) (?:of|for)\b/gi, 'list $1ids of'],
  // "let me know which channels exist": a question to answer, not a message to send.
  [/\blet (?:me|us) know\b/gi, 'show me'],
  // "…, because the PR is merged", "… and after that I will save it": why, and what comes later, are not this ask.
  [/,? because\b.*$|,? (?:and )?(?:then|after that|afterwards|later)\b,? (?:i|we|you)\b.*$/gi, ''],
  // "the reference server", "the test server": what people call the server they test against, not a reference.
  [/\b(?:the )?(?:mcp )?(?:reference|test|demo|sample) (?:mcp )?server\b/gi, 'the server'],
  // "after loading the page, capture …", "… before replying": context around the ask, not the ask.
  [/^(?:after|before|once|when|while) (?:[^,]+,\s*|[^,]+?(?=\b(?:i|we) (?:need|want)\b))|(?<=\w),?\s+(?:before|after) \w+ing\b.*$/gi, ''],
  // "the #main-content div": a CSS id, not a Slack channel.
  [/(?:^|\s)#[a-z][\w-]*(?= (?:div|element|section|span|selector|container|block|node|tag)\b)/gi, ' css selector'],
  // "pull up issue 77": show it.
  [/\bpull up\b/gi, 'get'],
  // "tell me about", "tell me what": a question to answer, not a message to send.
  [/\btell me\b/gi, 'show me'],
  // "give me", "send me": get it for me.
  [/\b(?:give|send|hand|bring) me\b/gi, 'get'],
  // "close the PR without merging": what is not to be done is no request.
  [/\bwithout \w+ing\b/gi, ' '],
  // "19 + 23" reads as "19 plus 23".
  [/(\d)\s*\+\s*(-?\d)/g, '$1 plus $2'],
  // "who last changed src/main.go": the commits that touched it.
  [
    /\bwho(?:'s| has| have)? (?:been )?(?:last |recently |most recently )?(?:changed|changing|modified|modifying|edited|editing|touched|touching)\b/gi,
    'list commits that changed',
  ],
  // "add 17 and 25": a sum, not something added to a thing.
  [/\badd (?:up )?(?:the )?(?:numbers )?(-?\d[\d.]*) (?:and|to|plus) (-?\d[\d.]*)/gi, 'sum of $1 and $2'],
];

/** Short names people give integrations, read as if the name were written out. */
export const NAME_ALIASES = wordTable<string>({ hn: 'hackernews', gh: 'github', ycombinator: 'hackernews' });

/**
 * Request words that name an integration by its product's things, with how surely: "ticket" is
 * Jira's word (and sometimes Linear's), "channel" Slack's, "repo" and "PR" GitHub's. An
 * integration's own name, display name and tool prefix count too (see ToolSearchIndex).
 */
export const PRODUCT_WORDS = wordTable<Record<string, number>>({
  ticket: { 'atlassian-jira': 0.8, linear: 0.3 },
  jql: { 'atlassian-jira': 1 },
  backlog: { 'atlassian-jira': 0.4, linear: 0.4 },
  story: { 'atlassian-jira': 0.5, hackernews: 0.5 },
  epic: { 'atlassian-jira': 0.6 },
  sprint: { 'atlassian-jira': 0.6 },
  spaces: { 'atlassian-jira': 0.5 },
  channel: { slack: 1 },
  dm: { slack: 0.8 },
  workspace: { slack: 0.6 },
  thread: { slack: 0.4 },
  repo: { github: 1 },
  pr: { github: 1 },
  prs: { github: 1 },
  branch: { github: 1 },
  commit: { github: 1 },
  readme: { github: 0.6 },
  code: { github: 0.6 },
  org: { github: 0.5 },
  karma: { hackernews: 1 },
  project: { 'atlassian-jira': 0.4 },
  upvote: { hackernews: 1 },
  upvoted: { hackernews: 1 },
  favorite: { hackernews: 0.8 },
  web: { browser: 1 },
  page: { browser: 1 },
  site: { browser: 1 },
  website: { browser: 1 },
  url: { browser: 1 },
  homepage: { browser: 1 },
  css: { browser: 1 },
  selector: { browser: 1 },
  element: { browser: 0.8 },
  note: { jots: 0.7 },
  jot: { jots: 1 },
  remember: { jots: 1 },
  remind: { jots: 0.8 },
  idea: { jots: 0.6 },
  memo: { jots: 1 },
});
