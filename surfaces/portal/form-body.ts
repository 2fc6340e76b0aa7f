import express, { type NextFunction, type Request, type Response } from 'express';
import { sendRequestError } from '../http/request-text-guard.js';

export const FORM_LIMIT = '16kb';

/**
 * A portal form's fields, made safe for every route that reads them: each field once, and no
 * U+0000. A field sent twice (`a=1&a=2`, which the parser makes an array) is refused by name — no
 * portal form sends one twice, and a route reading it as text would see none, or worse. A field
 * holding U+0000 is refused by name too: Postgres text cannot hold it, no browser's form field
 * sends one, and changing what a person sent (a label saved as something else) would be worse than
 * saying what is wrong. (`a[b]=c` stays a field named `a[b]`, which no route reads: the parser does
 * not nest.)
 */
function safeFormFields(req: Request, res: Response, next: NextFunction): void {
  const body = req.body as Record<string, unknown> | undefined;
  if (!body || typeof body !== 'object') {
    next();
    return;
  }
  const fields: Record<string, string> = {};
  for (const [name, value] of Object.entries(body)) {
    const shownName = name.replaceAll('\u0000', '\uFFFD');
    if (typeof value !== 'string') {
      sendRequestError(
        req,
        res,
        400,
        'Form not accepted',
        `The form field "${shownName.slice(0, 60)}" was sent more than once; send it once.`,
      );
      return;
    }
    if (name !== shownName || value.includes('\u0000')) {
      sendRequestError(
        req,
        res,
        400,
        'Form not accepted',
        `The form field "${shownName.slice(0, 60)}" contains U+0000 (a NUL character), which no field here can hold.`,
      );
      return;
    }
    fields[name] = value;
  }
  req.body = fields;
  next();
}

/** A portal form's body: urlencoded fields, at most 16 kB (a form holds a few short fields), made safe (above). */
export const formBody = [express.urlencoded({ extended: false, limit: FORM_LIMIT }), safeFormFields];
