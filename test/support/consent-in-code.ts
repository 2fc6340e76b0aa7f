/**
 * Follows an authorization URL of the tests' oidc-provider as a browser would — its dev
 * interactions' sign-in form (any login) and consent button — with a cookie jar, and returns the
 * redirect to the client's callback (code, state, iss) without following it.
 */
export async function consentInCode(authorizationUrl: URL, login: string): Promise<URL> {
  const jar = new Map<string, string>();
  const origin = authorizationUrl.origin;
  let url = authorizationUrl;
  let post: URLSearchParams | undefined;
  for (let hop = 0; hop < 20; hop++) {
    const res = await fetch(url, {
      method: post ? 'POST' : 'GET',
      redirect: 'manual',
      headers: {
        cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '),
        ...(post && { 'content-type': 'application/x-www-form-urlencoded' }),
      },
      body: post,
    });
    for (const cookie of res.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const eq = pair.indexOf('=');
      jar.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
    post = undefined;
    const location = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && location) {
      const next = new URL(location, url);
      if (next.origin !== origin) return next;
      url = next;
      continue;
    }
    const html = await res.text();
    if (res.status !== 200) throw new Error(`the authorization server answered ${res.status}: ${html.slice(0, 300)}`);
    if (html.includes('name="login"')) post = new URLSearchParams({ prompt: 'login', login, password: 'any' });
    else if (html.includes('value="consent"')) post = new URLSearchParams({ prompt: 'consent' });
    else throw new Error(`unexpected page from the authorization server: ${html.slice(0, 300)}`);
  }
  throw new Error('too many hops at the authorization server');
}
