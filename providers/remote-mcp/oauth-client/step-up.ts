import { bearerChallenge } from './www-authenticate.js';

/** At most this many scopes in a step-up challenge; a longer list is not followed. */
const MAX_SCOPES = 50;
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]{1,200}$/;

/** What a step-up authorization asks for, and why (for the agent's `needs_reauth`). */
interface StepUp {
  scopes: string[];
  reason: string;
}

/**
 * From a 403's `WWW-Authenticate: Bearer error="insufficient_scope", scope="…"` (MCP authorization
 * 2025-11-25, "Scope Challenge Handling"): the scopes of a new authorization — the granted ones
 * and the challenged ones together, so the upgrade loses nothing the token already had.
 * Undefined when the answer is not an insufficient_scope challenge, or asks for nothing new (a
 * step-up would not help: the caller reports the failure instead of looping).
 */
export function stepUpScopes(header: string | null | undefined, granted: readonly string[] = []): StepUp | undefined {
  const challenge = bearerChallenge(header);
  if (challenge?.error !== 'insufficient_scope' || !challenge.scope?.length) return undefined;
  // A hostile server's challenge is bounded: scope tokens as RFC 6749 §3.3 defines them, a handful.
  if (challenge.scope.length > MAX_SCOPES || !challenge.scope.every((s) => SCOPE_TOKEN.test(s))) return undefined;
  const missing = challenge.scope.filter((s) => !granted.includes(s));
  if (!missing.length) return undefined;
  const scopes = [...new Set([...granted, ...challenge.scope])].slice(0, MAX_SCOPES * 2);
  const why = challenge.errorDescription ? `: ${challenge.errorDescription.slice(0, 200)}` : '';
  return { scopes, reason: `the server needs the scope${missing.length > 1 ? 's' : ''} ${missing.join(' ')}${why}` };
}
