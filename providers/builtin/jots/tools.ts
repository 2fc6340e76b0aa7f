import { z } from 'zod';
import type { JotsStore } from '../../../core/ports/jots.js';
import { defineTool, type ToolContext } from '../../sdk/index.js';

/** Limits of one note. */
const TITLE_MAX_CHARS = 200;
const BODY_MAX_BYTES = 100_000;
const TAGS_MAX = 20;
const TAG_MAX_CHARS = 50;

const utf8Bytes = (s: string) => new TextEncoder().encode(s).length;

/** Postgres text cannot hold U+0000: refused as an argument instead of failing the statement. */
const storable = (s: string) => !s.includes('\u0000');
const NUL_MESSAGE = 'must not contain the character U+0000';

const noteId = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .refine(storable, NUL_MESSAGE)
  .describe('Id of the note, e.g. "jot_3kTq…" (from create_note, list_notes or search_notes)');
const title = z
  .string()
  .trim()
  .min(1)
  .max(TITLE_MAX_CHARS)
  .refine(storable, NUL_MESSAGE)
  .describe(`Title of the note, 1–${TITLE_MAX_CHARS} characters`);
const body = z
  .string()
  .refine((s) => utf8Bytes(s) <= BODY_MAX_BYTES, `at most ${BODY_MAX_BYTES / 1000} kB of UTF-8 text`)
  .refine(storable, NUL_MESSAGE)
  .describe(`Text of the note (plain text or Markdown), up to ${BODY_MAX_BYTES / 1000} kB`);
const tags = z
  .array(z.string().trim().min(1).max(TAG_MAX_CHARS).refine(storable, NUL_MESSAGE))
  .max(TAGS_MAX)
  .describe(`Labels for the note, e.g. ["work", "ideas"]; at most ${TAGS_MAX}, each up to ${TAG_MAX_CHARS} characters, kept in lower case`);

function storeOf(ctx: ToolContext): JotsStore {
  const store = ctx.services?.jots;
  if (!store) throw new Error('Notes are not available in this process (no jots store).');
  return store;
}

/** Lower case, each once, in the order given. */
const normalizeTags = (list: string[] | undefined) => (list === undefined ? undefined : [...new Set(list.map((t) => t.toLowerCase()))]);

const missing = (id: string) => new Error(`No note with id ${id}.`);

export const jotsTools = [
  defineTool({
    name: 'create_note',
    description:
      'Save a new private note for the user: a title, a body (plain text or Markdown, up to 100 kB) and optional tags. Only this user can read it. Returns the note {id, title, body, tags, createdAt, updatedAt}; keep the id for get_note, update_note or delete_note.',
    access: 'write',
    input: z.object({ title, body, tags: tags.optional() }),
    async run(args, ctx) {
      return storeOf(ctx).create(ctx.caller, { title: args.title, body: args.body, tags: normalizeTags(args.tags) ?? [] });
    },
  }),
  defineTool({
    name: 'get_note',
    description:
      'Read one of the user\'s notes in full by id: {id, title, body, tags, createdAt, updatedAt}. Fails with "No note with id …" when the user has no such note. Use list_notes or search_notes to find ids.',
    access: 'read',
    input: z.object({ id: noteId }),
    async run(args, ctx) {
      const note = await storeOf(ctx).get(ctx.caller, args.id);
      if (!note) throw missing(args.id);
      return note;
    },
  }),
  defineTool({
    name: 'list_notes',
    description:
      "List the user's notes, most recent first, as {notes: [{id, title, tags, preview, createdAt, updatedAt}], nextCursor}. preview is the start of the body; call get_note for all of it. limit defaults to 20 (max 100); pass nextCursor back as cursor for the next page (null: no more).",
    access: 'read',
    input: z.object({
      limit: z.number().int().min(1).max(100).default(20).describe('Notes per page, 1–100 (default 20)'),
      cursor: z.string().min(1).max(500).optional().describe('nextCursor of the previous page; omit for the first page'),
    }),
    async run(args, ctx) {
      return storeOf(ctx).list(ctx.caller, { limit: args.limit, cursor: args.cursor });
    },
  }),
  defineTool({
    name: 'search_notes',
    description:
      'Search the user\'s notes by words in the title, tags and body (full-text, English stemming: "deploy" finds "deployment"; "quoted phrases", OR and -word work). Returns {notes: [{id, title, tags, snippet, rank, preview, createdAt, updatedAt}]}, best match first; snippet shows the matching words in «guillemets». Call get_note for a whole note.',
    access: 'read',
    input: z.object({
      query: z
        .string()
        .trim()
        .min(1)
        .max(500)
        .refine(storable, NUL_MESSAGE)
        .describe('Words to find, e.g. "quarterly budget" or "deploy -staging"'),
      limit: z.number().int().min(1).max(50).default(10).describe('Most results to return, 1–50 (default 10)'),
    }),
    async run(args, ctx) {
      return { notes: await storeOf(ctx).search(ctx.caller, { text: args.query, limit: args.limit }) };
    },
  }),
  defineTool({
    name: 'update_note',
    description:
      'Change one of the user\'s notes: only the fields you pass change (tags replaces the whole list; [] removes all). Returns the updated note {id, title, body, tags, createdAt, updatedAt}. Fails with "No note with id …" when the user has no such note.',
    access: 'write',
    input: z
      .object({ id: noteId, title: title.optional(), body: body.optional(), tags: tags.optional() })
      .refine((a) => a.title !== undefined || a.body !== undefined || a.tags !== undefined, 'pass at least one of title, body and tags'),
    async run(args, ctx) {
      const { id, tags: newTags, ...rest } = args;
      const note = await storeOf(ctx).update(ctx.caller, id, { ...rest, tags: normalizeTags(newTags) });
      if (!note) throw missing(id);
      return note;
    },
  }),
  defineTool({
    name: 'delete_note',
    description:
      'Delete one of the user\'s notes for good (it cannot be restored). Returns {deleted: true, id}. Fails with "No note with id …" when the user has no such note.',
    access: 'destructive',
    input: z.object({ id: noteId }),
    async run(args, ctx) {
      if (!(await storeOf(ctx).delete(ctx.caller, args.id))) throw missing(args.id);
      return { deleted: true, id: args.id };
    },
  }),
];
