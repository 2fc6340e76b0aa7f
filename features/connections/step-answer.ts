import type { ConnectionAttempt } from './store/connection-attempts.js';

/** A message page a connection step answers with. */
interface StepPage {
  status: number;
  title: string;
  message: string;
  tone: 'ok' | 'bad';
}

/**
 * What a browser step of a connection (the connect link, the OAuth callback) answers. The steps
 * decide; the server renders the answer, so they neither write HTML nor know the portal's routes.
 */
export type StepAnswer =
  | ({ kind: 'page' } & StepPage)
  /** The connect rule refuses this user now (its reason); nothing was connected. */
  | { kind: 'not-allowed'; reason: string }
  /** Nobody is signed in to the portal here: sign in, then come back to this URL. */
  | { kind: 'sign-in' }
  /** On to the service's consent page. */
  | { kind: 'redirect'; url: string }
  /** A cookie attempt: on to its capture session. */
  | { kind: 'cookie-capture'; attempt: ConnectionAttempt };

export const pageAnswer = (status: number, title: string, message: string, tone: StepPage['tone'] = 'bad'): StepAnswer => ({
  kind: 'page',
  status,
  title,
  message,
  tone,
});
