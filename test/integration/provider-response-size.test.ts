import { describe, expect, it } from 'vitest';
import { github } from '../../providers/github/index.js';
import { ResponseTooLarge } from '../../providers/http.js';
import { linear } from '../../providers/linear/index.js';
import type { Credential, Provider } from '../../providers/sdk.js';
import { createToolContext } from '../../providers/tool-context.js';
import { startWorld } from '../support/harness.js';

/**
 * Finding 16 over real HTTP: a service (hostile, or broken) that answers an endless body. The
 * tool context stops reading at the cap and hangs up, instead of buffering until memory runs out.
 */

const world = await startWorld({ clients: { github: {} }, apis: true, stack: false });
const { apis } = world;
const LINEAR_KEY = 'lin_api_size_0123456789';
const CAP = 256 * 1024;
apis.state.linear.grantKey(LINEAR_KEY, { name: 'Lin Size', email: 'lin@size.example' });
const token = await world.accessToken('github', 'octocat');

async function runCapped(provider: Provider, mount: string, credential: Credential, name: string, args: Record<string, unknown>) {
  const tool = provider.tools.find((t) => t.name === name)!;
  const ctx = createToolContext({
    provider,
    credential,
    apiBaseUrl: `${apis.baseUrl}/${mount}`,
    signal: AbortSignal.timeout(5_000),
    logger: { info() {}, warn() {} },
    caller: { tenantId: 'tenant-1', userId: 'user-1' },
    maxResponseBytes: CAP,
  });
  const started = Date.now();
  const outcome = await tool.run(tool.input.parse(args), ctx).then(
    () => undefined,
    (err: unknown) => err,
  );
  return { outcome, ms: Date.now() - started };
}

describe('finding 16: provider response size', () => {
  it.each([
    ['github', '/github/user/repos', () => runCapped(github, 'github', { type: 'oauth2', accessToken: token }, 'list_repos', {})],
    ['linear', '/linear/graphql', () => runCapped(linear, 'linear', { type: 'apikey', fields: { apiKey: LINEAR_KEY } }, 'list_teams', {})],
  ])('finding 16: an endless %s answer stops at the cap, promptly, and the connection is let go', async (_, path, call) => {
    apis.behave.set(path, { endless: true, times: 1 });
    const abandoned = apis.abandoned;
    const sentBefore = apis.endlessBytesSent;
    const { outcome, ms } = await call();
    expect(outcome).toBeInstanceOf(ResponseTooLarge);
    expect((outcome as Error).message).toBe(`The provider's response was larger than ${CAP} bytes; Switchboard stopped reading it`);
    expect(ms).toBeLessThan(5000);
    // The client hung up: the service stops sending soon after the cap (plus what sat in socket buffers).
    await expect.poll(() => apis.abandoned).toBe(abandoned + 1);
    await new Promise((r) => setTimeout(r, 200));
    const sent = apis.endlessBytesSent - sentBefore;
    await new Promise((r) => setTimeout(r, 300));
    expect(apis.endlessBytesSent - sentBefore).toBe(sent);
    expect(sent).toBeLessThan(CAP + 16 * 1024 * 1024);
  });

  it('finding 16: a declared Content-Length over the cap is refused before the body is read', async () => {
    const big = Array.from({ length: 400 }, (_, i) => ({ full_name: `o/r${i}`, description: 'x'.repeat(1000) }));
    apis.behave.set('/github/user/repos', { status: 200, body: big, times: 1 });
    const { outcome } = await runCapped(github, 'github', { type: 'oauth2', accessToken: token }, 'list_repos', {});
    expect(outcome).toBeInstanceOf(ResponseTooLarge);
  });

  it('answers under the cap read as before', async () => {
    const { outcome } = await runCapped(github, 'github', { type: 'oauth2', accessToken: token }, 'get_authenticated_user', {});
    expect(outcome).toBeUndefined();
  });
});
