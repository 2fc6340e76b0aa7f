import { redact } from '../../../core/result-limits.js';

/** Replaces the caller's secrets anywhere in a result (a service may echo a token back). */
export function redactResult(result: unknown, secrets: string[]): unknown {
  if (!secrets.length || result === undefined) return result;
  const json = JSON.stringify(result);
  if (json === undefined || !secrets.some((s) => s.length >= 6 && json.includes(s))) return result;
  return JSON.parse(
    redact(
      json,
      secrets.map((s) => JSON.stringify(s).slice(1, -1)),
    ),
  );
}
