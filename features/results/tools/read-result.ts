import { z } from 'zod';
import { MetaToolError } from '../../../core/errors.js';
import { ResultReadError } from '../../../core/result-slices.js';
import { defineMetaTool } from '../../meta-tool.js';
import { remoteReadResult } from '../../sources/composite.js';
import { READ_RESULT_MAX_BYTES, readResultSlice } from '../read-result.js';

/** At most this many JSON pointers in one `select`. */
const SELECT_MAX_POINTERS = 50;

/**
 * read_result: the rest of a cut result, by the `resultRef` a truncated result carries. Offsets
 * are byte offsets into the result's JSON text (UTF-8); each slice ends on a character boundary and
 * names the next offset. `select` (RFC 6901 JSON pointers) pages over just those parts: the text
 * is then the JSON object `{pointer: value}` of the pointers that name something. Only the user
 * whose call produced the result reads it: another user's, another tenant's, an expired and a
 * made-up reference all answer the same 404 "Unknown resultRef".
 */
export const readResult = defineMetaTool({
  name: 'read_result',
  description:
    'Read more of a result that was cut (truncated: true): resultRef from that result; offset: byte offset into its JSON text ' +
    '(default 0; use nextOffset from the previous answer); maxBytes: slice size (default the result limit, max ' +
    `${READ_RESULT_MAX_BYTES}). Answers {result: the next slice of JSON text, offset, nextOffset (null at the end), totalBytes}. ` +
    'select: optional list of JSON pointers (e.g. ["/items/0/title"]) to read only those parts, as {pointer: value}; pointers ' +
    'that name nothing are listed in missing.',
  input: z
    .object({
      resultRef: z.string().min(1).max(200),
      offset: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).default(0),
      maxBytes: z.number().int().positive().max(READ_RESULT_MAX_BYTES).optional(),
      select: z.array(z.string().max(1000)).min(1).max(SELECT_MAX_POINTERS).optional(),
    })
    .strict(),
  async handler(ctx, caller, args) {
    // A result a remote source cut names its reference there, behind the source's prefix.
    const remote = await remoteReadResult(ctx, caller, args);
    if (remote) {
      if (remote.status !== 200) throw new MetaToolError(remote.body as { error: string }, remote.status);
      return remote.body;
    }
    const maxBytes = args.maxBytes ?? ctx.config.CONNECTIONS_TOOL_RESULT_MAX_BYTES;
    try {
      const slice = await readResultSlice(ctx.pool, ctx.keyring, caller, { ...args, maxBytes });
      if (!slice) throw new MetaToolError({ error: 'Unknown resultRef' }, 404);
      return slice;
    } catch (err) {
      if (err instanceof ResultReadError) throw new MetaToolError({ error: `Invalid arguments for read_result: ${err.message}` }, 400);
      throw err;
    }
  },
});
