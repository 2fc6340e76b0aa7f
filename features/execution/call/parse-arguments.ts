import { secretArgumentTexts } from '../../../core/approval-summary.js';
import { reportedIssues } from '../../../core/errors.js';
import { failure, type ToolOutcome } from '../../../core/execution.js';
import { cachedInputJsonSchema } from '../../../core/json-schema.js';
import type { ToolCall } from './call.js';

/**
 * Distinct secret argument values (secretArgumentTexts) one call may carry. Every result and error
 * text is scanned once per secret to redact it, on the worker's event loop: a megabyte of short
 * strings under a key named `token` would be 90,000 scans of a result of up to 10 MB. No real tool
 * takes more than a few secrets.
 */
export const MAX_SECRET_ARGUMENT_VALUES = 8;

/**
 * Step 2, the arguments: parsed with the tool's schema once its entry is known (a declared tool's
 * at once, an upstream one's once listed), into `call.args`. An upstream tool's arguments are
 * checked in a worker thread (schema-checker.ts): asynchronously.
 */
export async function parseArguments(call: ToolCall): Promise<ToolOutcome | undefined> {
  const { entry } = call;
  if (!entry) return undefined;
  const { tool } = call.input.call;
  const args = call.input.call.args ?? {};
  const parsed = entry.tool.asyncInput ? await entry.tool.input.safeParseAsync(args) : entry.tool.input.safeParse(args);
  if (!parsed.success) {
    return failure('invalid_arguments', `Arguments do not fit the schema of ${tool}.`, {
      issues: reportedIssues(parsed.error.issues),
    });
  }
  // Each secret argument is one more scan of the result and of any error text (redaction).
  const secretValues = new Set(secretArgumentTexts(args, cachedInputJsonSchema(entry.tool))).size;
  if (secretValues > MAX_SECRET_ARGUMENT_VALUES) {
    return failure(
      'invalid_arguments',
      `Arguments of ${tool} hold ${secretValues} secret values; at most ${MAX_SECRET_ARGUMENT_VALUES} are accepted in one call.`,
    );
  }
  call.args = parsed.data;
  return undefined;
}
