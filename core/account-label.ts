import { z } from 'zod';

/**
 * An account's label: what a human reads in the portal and an agent passes as `account`. One limit
 * for every way a label is set, so a label saved by one page always fits the rename box of another.
 */
export const ACCOUNT_LABEL_MAX_CHARS = 100;

/** A label a human typed: trimmed, not empty, at most ACCOUNT_LABEL_MAX_CHARS, no control characters. */
export const accountLabelSchema = z
  .string()
  .trim()
  .min(1, 'The label must not be empty.')
  .max(ACCOUNT_LABEL_MAX_CHARS, `The label must be at most ${ACCOUNT_LABEL_MAX_CHARS} characters.`)
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
  .refine((s) => !/[\u0000-\u001f\u007f]/.test(s), 'The label must not contain control characters.');

/** A label taken from elsewhere (a service's account name), cut to fit. */
export const fitAccountLabel = (text: string): string => text.slice(0, ACCOUNT_LABEL_MAX_CHARS);
