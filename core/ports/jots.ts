import type { CallerOwner } from '../caller.js';

/**
 * What the jots tools (providers/builtin/jots) need from storage. The worker supplies an implementation
 * (Postgres, `platform/database/jots.ts`) through `ToolContext.services`; providers never import the store.
 * Every method is scoped to its owner: a note of another user or tenant is the same as none.
 */

export type JotOwner = CallerOwner;

export interface Jot {
  id: string;
  title: string;
  body: string;
  tags: string[];
  /** ISO 8601. */
  createdAt: string;
  updatedAt: string;
}

/** A list row: the body shortened to a preview. */
export interface JotSummary {
  id: string;
  title: string;
  tags: string[];
  preview: string;
  createdAt: string;
  updatedAt: string;
}

export interface JotSearchHit extends JotSummary {
  /** ts_rank of the match, higher is better. */
  rank: number;
  /** The best fragment of the body with matches in «guillemets». */
  snippet: string;
}

export interface JotsStore {
  create(owner: JotOwner, note: { title: string; body: string; tags: string[] }): Promise<Jot>;
  /** Undefined when the owner has no such note. */
  get(owner: JotOwner, id: string): Promise<Jot | undefined>;
  /** Newest first. `cursor` is the opaque `nextCursor` of the previous page. */
  list(owner: JotOwner, page: { limit: number; cursor?: string }): Promise<{ notes: JotSummary[]; nextCursor: string | null }>;
  /** Full-text search (websearch syntax: words, "phrases", OR, -exclusion), best match first. */
  search(owner: JotOwner, query: { text: string; limit: number }): Promise<JotSearchHit[]>;
  /** Undefined when the owner has no such note. Only the fields given change. */
  update(owner: JotOwner, id: string, patch: { title?: string; body?: string; tags?: string[] }): Promise<Jot | undefined>;
  /** False when the owner has no such note. */
  delete(owner: JotOwner, id: string): Promise<boolean>;
}

/** Thrown by a store for a cursor it did not make. */
export class InvalidCursorError extends Error {
  constructor() {
    super('Invalid cursor: pass the nextCursor of a previous list_notes answer, or none for the first page.');
    this.name = 'InvalidCursorError';
  }
}

/** Thrown by a store when the owner's notes are full: nothing was saved. */
export class JotsFullError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JotsFullError';
  }
}
