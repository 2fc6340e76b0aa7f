import type { CallerOwner } from '../../core/caller.js';
import { type Binding, type BindingDeps, isBoundBrowser } from './browser-binding.js';
import type { BrowserVisit } from './browser-visit.js';

/** A page to answer instead of going on: who is here may not take this step. */
interface Refusal {
  status: number;
  title: string;
  message: string;
}

export const WRONG_ACCOUNT: Refusal = {
  status: 403,
  title: 'Wrong account',
  message:
    'This link was made for a different Switchboard user than the one signed in here. Sign out and sign in as the user your agent works for, or ask the agent for a new link.',
};

const NOT_SIGNED_IN: Refusal = {
  status: 403,
  title: 'Not signed in',
  message: 'Sign in to Switchboard as the user this link was made for, then open the connect link again. Nothing was connected.',
};

const WRONG_BROWSER: Refusal = {
  status: 403,
  title: 'Wrong browser',
  message:
    'This sign-in was started in another browser, or too long ago. Open the connect link again in this browser. Nothing was connected.',
};

/**
 * Why the human in this browser may not take the next step of a connection flow owned by `owner`,
 * or undefined when they may: signed in to the portal as exactly that user of that tenant (read
 * fresh from the store), and in the browser that started the flow (its binding cookie). Anyone
 * else gets a refusal page and the step does nothing: a consent URL, capture URL or form handed to
 * another person or browser is worth nothing there.
 */
export async function whyNotFlowOwner(
  ctx: BindingDeps,
  visit: BrowserVisit,
  owner: CallerOwner,
  binding: Binding,
): Promise<Refusal | undefined> {
  const me = await visit.signedInUser();
  if (!me) return NOT_SIGNED_IN;
  if (me.userId !== owner.userId || me.tenantId !== owner.tenantId) return WRONG_ACCOUNT;
  if (!isBoundBrowser(ctx, visit.req, binding)) return WRONG_BROWSER;
  return undefined;
}
