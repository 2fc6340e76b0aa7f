import type { Request, Response } from 'express';
import type { ServiceContext } from '../../features/context.js';
import type { Provider } from '../../providers/sdk/index.js';
import { AUTH_MODE_LABEL, connectButton, connectsByAttempt, consentOrigins } from './connect-controls.js';
import { csrfToken } from './csrf.js';
import { allowFormActionTo } from './form-action.js';
import { html, messagePage } from './html.js';
import { portalPage } from './portal-page.js';
import type { SignedIn } from './signed-in.js';

/** The page of an integration that is not connected with a key: its Connect button. */
export async function connectPage(ctx: ServiceContext, req: Request, res: Response, me: SignedIn, provider: Provider): Promise<void> {
  const { displayName, description, auth } = provider.manifest;
  if (auth === 'none') {
    res.send(messagePage(displayName, `${displayName} is built in and always connected; there is nothing to connect.`, 'ok'));
    return;
  }
  if (!connectsByAttempt(ctx, provider)) {
    res.status(503).send(messagePage(displayName, `${displayName} is not configured on this server; ask an operator.`, 'bad'));
    return;
  }
  const csrf = csrfToken(ctx, req);
  allowFormActionTo(res, await consentOrigins(ctx, [provider]));
  res.send(
    portalPage(
      displayName,
      me,
      'integrations',
      html`<h1>${displayName} <span class="tag">${AUTH_MODE_LABEL[auth]}</span></h1><p class="muted">${description}</p>
<div class="box"><p>Connecting sends you to ${displayName} to sign in and approve access.</p>
<p>${connectButton(csrf, provider, false, 'Connect')} ${me.isAdmin ? connectButton(csrf, provider, true, 'Connect for organisation') : ''}</p></div>
<p><a href="/portal/integrations">← All integrations</a></p>`,
    ),
  );
}
