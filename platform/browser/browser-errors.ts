/** A refusal of the network policy, in words the agent can act on. */
export class BrowserRefusal extends Error {
  constructor(url: string, reason: string) {
    super(
      `Refused to open ${url}: ${reason}. The browser opens public http(s) addresses only; an operator can allow hosts with BROWSER_ALLOWED_HOSTS.`,
    );
    this.name = 'BrowserRefusal';
  }
}

/** The first line of a Playwright error, without the method name and call log. */
export const briefly = (err: unknown) =>
  String((err as Error)?.message ?? err)
    .split('\n')[0]
    .replace(/^[a-zA-Z.]+: /, '');
