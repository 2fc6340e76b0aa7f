/**
 * The words people use for what a tool does, mapped onto the words tool names use. Requests say
 * "file a bug", "reply to the ticket", "who am I"; tools are named `create_issue`, `add_comment`,
 * `get_authenticated_user`. Fixed tables, no model: the same request always reads the same way.
 */

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
  | 'whoami';

/** A tool name's words that say its operation; the first such word is its main one. */
export const NAME_OPERATIONS: Record<string, Operation> = {
  list: 'list',
  get: 'get',
  read: 'get',
  fetch: 'get',
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
};

type Weighted = Partial<Record<Operation, number>>;

/**
 * Request words → the operations they ask for, with how surely. Words here are intent, not
 * subject: they steer the operation and are not matched against descriptions (except the ones
 * that are also nouns of tools, marked in KEEP_AS_TEXT).
 */
export const INTENT_WORDS: Record<string, Weighted> = {
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
  // list: many
  list: { list: 1 },
  all: { list: 0.8 },
  which: { list: 0.8 },
  every: { list: 0.6 },
  enumerate: { list: 1 },
  recent: { list: 0.6 },
  latest: { list: 0.5 },
  exist: { list: 0.6 },
  // search: by words or conditions
  search: { search: 1 },
  find: { search: 1 },
  grep: { search: 1 },
  query: { search: 0.8 },
  mentioning: { search: 1 },
  mention: { search: 0.8 },
  assigned: { search: 0.8 },
  authored: { search: 0.8 },
  through: { search: 0.5 },
  across: { search: 0.6 },
  labeled: { search: 0.8 },
  tagged: { search: 0.8 },
  backlog: { list: 0.6 },
  pull: { extract: 0.6 },
  // create
  create: { create: 1 },
  new: { create: 0.8 },
  file: { create: 0.6 },
  raise: { create: 1 },
  report: { create: 0.8 },
  log: { create: 0.6, list: 0.3 },
  make: { create: 1 },
  submit: { create: 1 },
  save: { create: 0.8 },
  remember: { create: 1 },
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
  reopen: { update: 1 },
  close: { update: 0.8, transition: 0.5 },
  correct: { update: 1 },
  fix: { update: 0.8 },
  rewrite: { update: 1 },
  // delete
  delete: { delete: 1 },
  remove: { delete: 1 },
  erase: { delete: 1 },
  discard: { delete: 1 },
  trash: { delete: 1 },
  rid: { delete: 1 },
  throw: { delete: 1 },
  destroy: { delete: 1 },
  // send
  send: { send: 1 },
  post: { send: 0.8, comment: 0.5, create: 0.3 },
  notify: { send: 1 },
  tell: { send: 1 },
  ping: { send: 1 },
  announce: { send: 1 },
  message: { send: 0.6 },
  dm: { send: 1 },
  say: { send: 0.4, search: 0.3 },
  // comment
  comment: { comment: 1 },
  reply: { comment: 1, send: 0.5 },
  respond: { comment: 1 },
  answer: { comment: 0.8 },
  // the rest
  merge: { merge: 1 },
  land: { merge: 1 },
  ship: { merge: 0.8 },
  squash: { merge: 1 },
  assign: { assign: 1 },
  unassign: { assign: 1 },
  reassign: { assign: 1 },
  ownership: { assign: 1 },
  give: { assign: 0.8 },
  transition: { transition: 1 },
  move: { transition: 1 },
  mark: { transition: 0.8 },
  resolve: { transition: 1 },
  status: { transition: 0.5, get: 0.3 },
  react: { react: 1 },
  emoji: { react: 1 },
  acknowledge: { react: 0.8 },
  visit: { open: 1 },
  browse: { open: 1 },
  screenshot: { screenshot: 1 },
  capture: { screenshot: 1 },
  snapshot: { screenshot: 1 },
  extract: { extract: 1 },
  scrape: { extract: 1 },
  whoami: { whoami: 1 },
};

/** Phrases read before single words, so "who am I" is one intent and not three words. */
export const INTENT_PHRASES: [RegExp, Weighted][] = [
  [
    /\b(?:who|which \w+|what \w+) am i\b|\bmy (?:\w+ )?(?:account|username|login|profile|karma)\b|\bwhich \w+ (?:user|account) is connected\b/,
    { whoami: 1.5 },
  ],
  [/\blook (?:for|through)\b/, { search: 1 }],
  [/\blook up\b/, { get: 0.6, search: 0.8 }],
  [/\brun (?:a |an |the )?(?:\w+ )?query\b/, { search: 1 }],
  [/\b(?:note|comment|reply) (?:on|to)\b/, { comment: 1 }],
  [/\bget rid of\b|\bthrow away\b/, { delete: 1.5 }],
  [/\bwrite down\b|\bjot down\b/, { create: 1.5 }],
  [/\blook like\b/, { screenshot: 1.5 }],
  [/\bcatch up\b/, { list: 1 }],
  [/\bmove .* to\b|\bmark .* as\b/, { transition: 0.5 }],
  [/\bwhat (?:was|did) .* say\b|\bwhat was said\b/, { list: 0.5 }],
  [/\bopen (?:a|an|new)\b/, { create: 1 }],
  [/\bopen (?:https?:|www\.)/, { open: 1.5 }],
  [/\bhow (?:much|many)\b/, { get: 0.6 }],
  [/(?:^|\s):[a-z0-9_+-]+:/, { react: 1.2 }],
  [/(?:^|\s)\.[a-z][\w-]*|\belements?\b/, { extract: 1 }],
  [/\bgit log\b/, { list: 1.5 }],
  [/\bwhat(?:'s| is) (?:the|in)\b/, { get: 0.8 }],
  [/\bopen (?:\w+ )?(?:issues|prs|tickets|bugs)\b|\b(?:is|are) open\b/, { list: 0.8, search: 0.6 }],
  [/\bopen (?:my|the|this|that)\b/, { get: 0.8 }],
  [/\bgo to\b/, { open: 1.2 }],
  [/\bwrite to\b/, { send: 1.2 }],
  [/\b(?:change|set|update) (?:the )?status\b/, { transition: 1.5 }],
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
]);

/** Verbs that lend their noun the operation: `add_comment` comments, `add_reaction` reacts. */
export const LIGHT_VERBS = new Set(['add', 'submit', 'post']);

/** Phrases read as one thing before words are looked up. */
export const REWRITES: [RegExp, string][] = [
  [/\b(?:pull|merge) requests?\b/gi, 'PR'],
  [/\bwhat's\b/gi, 'what is'],
  [/\bgit log\b/gi, 'list commits'],
  [/\bgrep\b/gi, 'search code'],
];

/** Short names people give integrations, read as if the name were written out. */
export const NAME_ALIASES: Record<string, string> = { hn: 'hackernews', gh: 'github', ycombinator: 'hackernews' };

/**
 * Request words that name an integration by its product's things, with how surely: "ticket" is
 * Jira's word (and sometimes Linear's), "channel" Slack's, "repo" and "PR" GitHub's. An
 * integration's own name, display name and tool prefix count too (see ToolSearchIndex).
 */
export const PRODUCT_WORDS: Record<string, Record<string, number>> = {
  ticket: { 'atlassian-jira': 0.8, linear: 0.3 },
  jql: { 'atlassian-jira': 1 },
  backlog: { 'atlassian-jira': 0.4, linear: 0.4 },
  story: { 'atlassian-jira': 0.5, hackernews: 0.5 },
  epic: { 'atlassian-jira': 0.6 },
  sprint: { 'atlassian-jira': 0.6 },
  spaces: { 'atlassian-jira': 0.5 },
  channel: { slack: 1 },
  workspace: { slack: 0.6 },
  thread: { slack: 0.4 },
  repo: { github: 1 },
  pr: { github: 1 },
  prs: { github: 1 },
  branch: { github: 1 },
  commit: { github: 1 },
  readme: { github: 1 },
  code: { github: 0.6 },
  org: { github: 0.5 },
  karma: { hackernews: 1 },
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
  idea: { jots: 0.6 },
  memo: { jots: 1 },
};
