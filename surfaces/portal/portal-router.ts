import { Router } from 'express';
import type { InFlightLimit } from '../../core/in-flight-limit.js';
import type { ServiceContext } from '../../features/context.js';
import { accountsRouter } from './accounts-page.js';
import { approvalsRouter } from './approvals-page.js';
import { connectActionRouter } from './connect-action.js';
import { homeRouter } from './home-page.js';
import { integrationPageRouter } from './integration-page.js';
import { integrationsListRouter } from './integrations-list-page.js';
import { registryRouter } from './registry-page.js';
import { signInRouter } from './sign-in-pages.js';
import { toolOverridesRouter } from './tool-overrides-page.js';
import { upstreamsRouter } from './upstreams-page.js';

/** Every page of the portal, for people (agents use the API and MCP). `keyTests`: the app's key-test bound (key-test-gate.ts). */
export function portalRouter(ctx: ServiceContext, keyTests: InFlightLimit): Router {
  return Router().use(
    homeRouter(ctx),
    signInRouter(ctx),
    integrationsListRouter(ctx),
    connectActionRouter(ctx),
    integrationPageRouter(ctx, keyTests),
    accountsRouter(ctx),
    upstreamsRouter(ctx),
    registryRouter(ctx),
    approvalsRouter(ctx),
    toolOverridesRouter(ctx),
  );
}
