import express, { type Request, type Response, Router } from 'express';
import { whyMayNotConnect } from '../../activities/prepare-connection.js';
import { fitAccountLabel } from '../../core/account-label.js';
import { ProviderHttpError, ResponseTooLarge } from '../../providers/http.js';
import type { AccountIdentity, Provider } from '../../providers/sdk.js';
import { type Account, attachCredential, getAccount, saveConnectedAccount } from '../../store/accounts.js';
import { transaction } from '../../store/queryable.js';
import { unbindBrowser } from '../connections/browser-binding.js';
import { checkContext } from '../connections/check-context.js';
import type { ServiceContext } from '../context.js';
import { enabledProviders } from '../meta/caller-tenant.js';
import { checkForm, type FormToken, formBinding, formTokenText, issueForm, type Target } from './apikey-form-token.js';
import { csrfToken, requireCsrf } from './csrf.js';
import { allowFormActionTo } from './form-action.js';
import { html, messagePage, notAllowedPage, type SafeHtml } from './html.js';
import {
  AUTH_MODE_LABEL,
  connectButton,
  connectsByAttempt,
  consentOrigins,
  FOR_ORGANISATION,
  integrationPath,
} from './integrations-pages.js';
import { portalPage, type SignedIn, signedIn, toSignIn } from './signed-in.js';

/**
 * GET/POST /portal/integrations/:name — the page `connect` points people to for an API-key
 * integration. The form is rendered from the manifest's `apiKeyFields`; a submission is tested
 * with ONE call to the service (the provider's `identify`) before anything is stored, then saved
 * sealed. An administrator adds an organisation account with `?for=organisation`, and anyone who
 * may manage an account puts a new key on it with `?account=<id>`. Other auth modes get a page
 * with their Connect button.
 *
 * A form is good for a while, for the user it was rendered for, in the browser that opened it, and
 * for the account it names (apikey-form-token.ts). Every GET and POST re-checks, with roles read now, that the user may connect this
 * integration (for the organisation: is an administrator).
 */

export const FIELD_MAX_CHARS = 1000;
const TEST_CALL_TIMEOUT_MS = 10_000;

const fieldInputName = (name: string) => `field_${name}`;

async function findProvider(ctx: ServiceContext, me: SignedIn, name: string): Promise<Provider | undefined> {
  return (await enabledProviders(ctx, me.caller)).find((p) => p.manifest.name === name);
}

/** Reads `for` / `account` from a query or a form; undefined (with a page sent) when not allowed. */
async function readTarget(
  ctx: ServiceContext,
  me: SignedIn,
  provider: Provider,
  source: Record<string, unknown>,
  res: Response,
): Promise<Target | undefined> {
  if (typeof source.account === 'string' && source.account) {
    const account = await getAccount(ctx.pool, me.caller.tenantId, source.account);
    const mayManage = account && (account.scope === 'user' ? account.ownerUserId === me.user.id : me.isAdmin);
    if (!account || !mayManage || account.integration !== provider.manifest.name) {
      res.status(404).send(messagePage('No such account', 'There is no account of yours with this id for this integration.', 'bad'));
      return undefined;
    }
    return { kind: 'account', account };
  }
  const forOrg = source.for === FOR_ORGANISATION;
  if (forOrg && !me.isAdmin) {
    res.status(403).send(messagePage('Administrators only', 'Only an administrator can add an organisation account.', 'bad'));
    return undefined;
  }
  return { kind: 'new', forOrg };
}

/** The user may connect this integration now (for the organisation when the target is one), else a 403 page. */
async function mayConnect(ctx: ServiceContext, me: SignedIn, provider: Provider, target: Target, res: Response): Promise<boolean> {
  const forOrg = target.kind === 'account' ? target.account.scope === 'tenant' : target.forOrg;
  const refused = await whyMayNotConnect(ctx.pool, me.caller, provider.manifest.name, forOrg ? 'tenant' : 'user');
  if (refused) res.status(403).send(notAllowedPage(refused, 'Nothing was saved.'));
  return !refused;
}

function targetInputs(target: Target): SafeHtml {
  if (target.kind === 'account') return html`<input type="hidden" name="account" value="${target.account.id}">`;
  return target.forOrg ? html`<input type="hidden" name="for" value="${FOR_ORGANISATION}">` : html``;
}

function renderForm(
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
function readFields(provider: Provider, body: Record<string, unknown>): { fields: Record<string, string>; errors: string[] } {
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

type TestOutcome = { ok: true; identity?: AccountIdentity } | { ok: false; status: number; message: string };

/** The one test call before saving: the provider's `identify`, with the submitted key. */
async function testKey(ctx: ServiceContext, me: SignedIn, provider: Provider, fields: Record<string, string>): Promise<TestOutcome> {
  const { name, displayName } = provider.manifest;
  if (!provider.identify) return { ok: true };
  const logger = ctx.logger.child({ integration: name, userId: me.user.id });
  try {
    const identity = await provider.identify(
      checkContext(ctx, {
        provider,
        credential: { type: 'apikey', fields },
        caller: { tenantId: me.caller.tenantId, userId: me.user.id },
        logger,
        timeoutMs: TEST_CALL_TIMEOUT_MS,
      }),
    );
    return { ok: true, identity };
  } catch (err) {
    // Only the status is logged: a service may echo the key in its error body.
    if (err instanceof ProviderHttpError && (err.status === 401 || err.status === 403)) {
      logger.info({ status: err.status }, 'the service refused an API key');
      return {
        ok: false,
        status: 400,
        message: `${displayName} refused this key (HTTP ${err.status}). Nothing was saved; check the key and try again.`,
      };
    }
    const why =
      err instanceof ProviderHttpError
        ? `answered HTTP ${err.status}`
        : err instanceof ResponseTooLarge
          ? `answered more than ${err.maxBytes} bytes`
          : 'could not be reached';
    logger.warn({ err: err instanceof ProviderHttpError ? err.message : (err as Error).name }, 'could not test an API key');
    return {
      ok: false,
      status: 502,
      message: `${displayName} ${why} when Switchboard tested the key. Nothing was saved; try again later.`,
    };
  }
}

/** The page of an integration that is not connected with a key: its Connect button. */
function otherModePage(ctx: ServiceContext, req: Request, res: Response, me: SignedIn, provider: Provider): void {
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
  allowFormActionTo(res, consentOrigins(ctx, [provider]));
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

export function apiKeyRouter(ctx: ServiceContext): Router {
  const router = Router();
  const form = express.urlencoded({ extended: false, limit: '16kb' });

  const notFound = (res: Response, name: string) =>
    res.status(404).send(messagePage('Integration not found', `No integration named "${name}" is enabled for your organisation.`, 'bad'));

  router.get('/portal/integrations/:name', async (req: Request, res: Response) => {
    const me = await signedIn(ctx, req);
    if (!me) return toSignIn(res, req.originalUrl);
    const name = String(req.params.name);
    const provider = await findProvider(ctx, me, name);
    if (!provider) return notFound(res, name);
    if (provider.manifest.auth !== 'apikey') return otherModePage(ctx, req, res, me, provider);
    const target = await readTarget(ctx, me, provider, req.query, res);
    if (!target || !(await mayConnect(ctx, me, provider, target, res))) return;
    res.send(renderForm(ctx, req, me, provider, target, issueForm(ctx, res, me, provider, target)));
  });

  router.post('/portal/integrations/:name', form, requireCsrf(ctx), async (req: Request, res: Response) => {
    const me = await signedIn(ctx, req);
    const name = String(req.params.name);
    if (!me) return toSignIn(res, integrationPath(name));
    const provider = await findProvider(ctx, me, name);
    if (!provider) return notFound(res, name);
    if (provider.manifest.auth !== 'apikey') {
      return res
        .status(400)
        .send(messagePage('No key needed', `${provider.manifest.displayName} is not connected with an API key.`, 'bad'));
    }
    const body = (req.body ?? {}) as Record<string, unknown>;
    const target = await readTarget(ctx, me, provider, body, res);
    if (!target) return;
    if (!(await mayConnect(ctx, me, provider, target, res))) return;
    const checked = checkForm(ctx, req, me, provider, target);
    if (checked.refusal) return res.status(checked.refusal.status).send(messagePage(checked.refusal.title, checked.refusal.message, 'bad'));
    const form = checked.token;
    const { fields, errors } = readFields(provider, body);
    const values = Object.fromEntries(
      (provider.manifest.apiKeyFields ?? []).filter((f) => !f.secret).map((f) => [f.name, String(body[fieldInputName(f.name)] ?? '')]),
    );
    if (errors.length) return res.status(400).send(renderForm(ctx, req, me, provider, target, form, { errors, values }));

    const tested = await testKey(ctx, me, provider, fields);
    if (!tested.ok) {
      return res.status(tested.status).send(renderForm(ctx, req, me, provider, target, form, { errors: [tested.message], values }));
    }

    const { displayName } = provider.manifest;
    const credential = { type: 'apikey' as const, fields };
    const externalId = tested.identity?.externalId ?? null;
    let saved: Account | undefined;
    if (target.kind === 'account') {
      saved = await attachCredential(ctx.pool, ctx.keyring, target.account, { credential, externalId });
    } else {
      saved = await transaction(ctx.pool, (db) =>
        saveConnectedAccount(db, ctx.keyring, {
          tenantId: me.caller.tenantId,
          ownerUserId: target.forOrg ? null : me.user.id,
          integration: name,
          label: fitAccountLabel(tested.identity?.label || displayName),
          externalId,
          credential,
        }),
      );
    }
    if (!saved) return res.status(404).send(messagePage('No such account', 'The account was deleted meanwhile; nothing was saved.', 'bad'));
    // A form saves once.
    unbindBrowser(ctx, res, formBinding(me, provider, target, form.nonce));
    ctx.logger.info({ integration: name, accountId: saved.id, scope: saved.scope }, 'API key saved from the portal');
    res.send(
      portalPage(
        'Saved',
        me,
        'integrations',
        html`<h1>${displayName} is connected</h1><div class="box ok" role="status">
<p>${saved.scope === 'tenant' ? 'The organisation' : 'Your'} ${displayName} account <strong>${saved.label}</strong> is saved${
          saved.isDefault ? ' and is the default' : ''
        }. ${displayName} accepted the key.</p>
${saved.scope === 'tenant' && saved.sharingRoles.length === 0 ? html`<p>It is shared with nobody yet: choose its roles on the Accounts page.</p>` : ''}</div>
<p><a class="button" href="/portal/accounts">Go to accounts</a> <a href="/portal/integrations">All integrations</a></p>`,
      ),
    );
  });

  return router;
}
