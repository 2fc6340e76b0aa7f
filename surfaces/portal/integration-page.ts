import { type Request, type Response, Router } from 'express';
import { fitAccountLabel } from '../../core/account-label.js';
import type { InFlightLimit } from '../../core/in-flight-limit.js';
import { type Account, attachCredential, getAccount, saveConnectedAccount } from '../../features/accounts/store/accounts.js';
import { enabledProviders } from '../../features/catalog/caller-tenant.js';
import { unbindBrowser } from '../../features/connections/browser-binding.js';
import { whyMayNotConnect } from '../../features/connections/connect-rule.js';
import { forTenant } from '../../features/connections/services.js';
import type { ServiceContext } from '../../features/context.js';
import { transaction } from '../../platform/database/queryable.js';
import type { Provider } from '../../providers/sdk/index.js';
import { apiKeyFormPage, keySavedPage, readFields, submittedValues } from './apikey-form.js';
import { checkForm, formBinding, issueForm, type Target } from './apikey-form-token.js';
import { enterKeyTest, testKey } from './apikey-test-call.js';
import { FOR_ORGANISATION, integrationPath } from './connect-controls.js';
import { connectPage } from './connect-page.js';
import { requireCsrf } from './csrf.js';
import { formBody } from './form-body.js';
import { messagePage, notAllowedPage } from './html.js';
import { refuseKeyTest } from './key-test-gate.js';
import { signedSessionClaims } from './session-cookie.js';
import { mayManage, type SignedIn, signedInAs, signedInPage, toSignIn } from './signed-in.js';

/**
 * GET/POST /portal/integrations/:name — the page `connect` points people to for an API-key
 * integration. The form is rendered from the manifest's `apiKeyFields`; a submission is tested
 * with ONE call to the service (the provider's `identify`) before anything is stored, then saved
 * sealed. An administrator adds an organisation account with `?for=organisation`, and anyone who
 * may manage an account puts a new key on it with `?account=<id>`. Other auth modes get a page
 * with their Connect button.
 *
 * A form is good for a while, for the user it was rendered for, in the browser that opened it,
 * and for the account it names (apikey-form-token.ts). Every GET and POST re-checks, with roles
 * read now, that the user may connect this integration (for the organisation: is an administrator).
 */

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
    if (!account || !mayManage(me, account) || account.integration !== provider.manifest.name) {
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

/** `keyTests` is the bound the app's front gate reads too (key-test-gate.ts). */
export function integrationPageRouter(ctx: ServiceContext, keyTests: InFlightLimit): Router {
  const router = Router();

  const notFound = (res: Response, name: string) =>
    res.status(404).send(messagePage('Integration not found', `No integration named "${name}" is enabled for your organisation.`, 'bad'));

  router.get(
    '/portal/integrations/:name',
    signedInPage(ctx, async (req, res, me) => {
      const name = String(req.params.name);
      const provider = await findProvider(ctx, me, name);
      if (!provider) return notFound(res, name);
      if (provider.manifest.auth !== 'apikey') return connectPage(await forTenant(ctx, me.caller.tenantId), req, res, me, provider);
      const target = await readTarget(ctx, me, provider, req.query, res);
      if (!target || !(await mayConnect(ctx, me, provider, target, res))) return;
      res.send(apiKeyFormPage(ctx, req, me, provider, target, issueForm(ctx, res, me, provider, target)));
    }),
  );

  router.post('/portal/integrations/:name', formBody, requireCsrf(ctx), async (req: Request, res: Response) => {
    const name = String(req.params.name);
    const claims = await signedSessionClaims(ctx, req);
    if (!claims) return toSignIn(res, integrationPath(name));
    // The gate at the app's front (key-test-gate.ts) refused most of a burst already; this admits.
    const leave = enterKeyTest(keyTests, claims);
    if (!leave) return refuseKeyTest(res);
    try {
      const me = await signedInAs(ctx, claims);
      if (!me) return toSignIn(res, integrationPath(name));
      await submitKey(req, res, me, name);
    } finally {
      leave();
    }
  });

  /** One admitted submission: checks, the test call, then the save. */
  async function submitKey(req: Request, res: Response, me: SignedIn, name: string): Promise<unknown> {
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
    const values = submittedValues(provider, body);
    if (errors.length) return res.status(400).send(apiKeyFormPage(ctx, req, me, provider, target, form, { errors, values }));

    const tested = await testKey(ctx, me, provider, fields);
    if (!tested.ok) {
      return res.status(tested.status).send(apiKeyFormPage(ctx, req, me, provider, target, form, { errors: [tested.message], values }));
    }

    const { displayName } = provider.manifest;
    const credential = { type: 'apikey' as const, fields, ...(provider.credentialBinding && { boundTo: provider.credentialBinding }) };
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
    res.send(keySavedPage(me, provider, saved));
  }

  return router;
}
