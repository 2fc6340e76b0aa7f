import type { Request } from 'express';
import type { Account } from '../../features/accounts/store/accounts.js';
import type { ServiceContext } from '../../features/context.js';
import type { Provider } from '../../providers/sdk/index.js';
import { type FormToken, formTokenText, type Target } from './apikey-form-token.js';
import { AUTH_MODE_LABEL, FOR_ORGANISATION, integrationPath } from './connect-controls.js';
import { csrfToken } from './csrf.js';
import { html, type SafeHtml } from './html.js';
import { portalPage } from './portal-page.js';
import type { SignedIn } from './signed-in.js';

/**
 * The API-key form of an integration, rendered from the manifest's `apiKeyFields`: the page, what
 * a submission's fields say, and the page once the key is saved. Which browser may submit it is
 * apikey-form-token.ts; the route and the test call are integration-page.ts and apikey-test-call.ts.
 */

const FIELD_MAX_CHARS = 1000;

const fieldInputName = (name: string) => `field_${name}`;

function targetInputs(target: Target): SafeHtml {
  if (target.kind === 'account') return html`<input type="hidden" name="account" value="${target.account.id}">`;
  return target.forOrg ? html`<input type="hidden" name="for" value="${FOR_ORGANISATION}">` : html``;
}

export function apiKeyFormPage(
  ctx: ServiceContext,
  req: Request,
  me: SignedIn,
  provider: Provider,
  target: Target,
  form: FormToken,
  state: { errors?: string[]; values?: Record<string, string> } = {},
): string {
  const { displayName, name } = provider.manifest;
  const fields = provider.manifest.apiKeyFields ?? [];
  const intro =
    target.kind === 'account'
      ? html`<p>Put a new key on the ${target.account.scope === 'tenant' ? 'organisation ' : ''}account <strong>${target.account.label}</strong>.</p>`
      : target.forOrg
        ? html`<p>Add an <strong>organisation</strong> ${displayName} account. Nobody can use it until you choose the roles it is shared with on the <a href="/portal/accounts">Accounts</a> page.</p>`
        : html`<p>Add your ${displayName} account so your agents can use it.</p>`;
  const inputs = fields.map((f) => {
    const id = `field-${f.name}`;
    const value = f.secret ? '' : (state.values?.[f.name] ?? '');
    return html`<div class="field"><label for="${id}">${f.label}</label>
<input id="${id}" name="${fieldInputName(f.name)}" type="${f.secret ? 'password' : 'text'}" placeholder="${f.placeholder ?? ''}" value="${value}"
 maxlength="${FIELD_MAX_CHARS}" required autocomplete="${f.secret ? 'new-password' : 'off'}" spellcheck="false"></div>`;
  });
  const errors = state.errors?.length
    ? html`<div class="box bad" role="alert">${state.errors.map((e) => html`<p class="error">${e}</p>`)}</div>`
    : html``;
  return portalPage(
    `${displayName} API key`,
    me,
    'integrations',
    html`<h1>${displayName} <span class="tag">${AUTH_MODE_LABEL.apikey}</span></h1>${intro}${errors}
<form method="post" action="${integrationPath(name)}" class="box" autocomplete="off">
<input type="hidden" name="_csrf" value="${csrfToken(ctx, req)}"><input type="hidden" name="_form" value="${formTokenText(form)}">${targetInputs(target)}${inputs}
<p class="muted">Switchboard makes one test call to ${displayName} with this key before saving it. It is stored encrypted and never shown again.</p>
<button type="submit">Test and save</button></form>
<p><a href="/portal/integrations">← All integrations</a></p>`,
  );
}

/** The submitted fields, trimmed, or what is wrong with them (never echoing a secret). */
export function readFields(provider: Provider, body: Record<string, unknown>): { fields: Record<string, string>; errors: string[] } {
  const fields: Record<string, string> = {};
  const errors: string[] = [];
  for (const f of provider.manifest.apiKeyFields ?? []) {
    const raw = body[fieldInputName(f.name)];
    const value = typeof raw === 'string' ? raw.trim() : '';
    if (!value) errors.push(`${f.label} is required.`);
    else if (value.length > FIELD_MAX_CHARS) errors.push(`${f.label} is longer than ${FIELD_MAX_CHARS} characters.`);
    else fields[f.name] = value;
  }
  return { fields, errors };
}

/** The non-secret fields as submitted, to fill the form again when it comes back with errors. */
export function submittedValues(provider: Provider, body: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    (provider.manifest.apiKeyFields ?? []).filter((f) => !f.secret).map((f) => [f.name, String(body[fieldInputName(f.name)] ?? '')]),
  );
}

/** The page after a key was tested and saved on `saved`. */
export function keySavedPage(me: SignedIn, provider: Provider, saved: Account): string {
  const { displayName } = provider.manifest;
  return portalPage(
    'Saved',
    me,
    'integrations',
    html`<h1>${displayName} is connected</h1><div class="box ok" role="status">
<p>${saved.scope === 'tenant' ? 'The organisation' : 'Your'} ${displayName} account <strong>${saved.label}</strong> is saved${
      saved.isDefault ? ' and is the default' : ''
    }. ${displayName} accepted the key.</p>
${saved.scope === 'tenant' && saved.sharingRoles.length === 0 ? html`<p>It is shared with nobody yet: choose its roles on the Accounts page.</p>` : ''}</div>
<p><a class="button" href="/portal/accounts">Go to accounts</a> <a href="/portal/integrations">All integrations</a></p>`,
  );
}
