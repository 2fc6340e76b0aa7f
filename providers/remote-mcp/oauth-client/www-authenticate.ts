/**
 * Reads the parameters of a `Bearer` challenge in a `WWW-Authenticate` header (RFC 6750 §3,
 * RFC 9728 §5.1): `resource_metadata`, `scope`, `error`, `error_description`. A real parser, not a
 * regular expression over the whole header, so a `scope=` inside a quoted URL is not taken for
 * the scope parameter, and quoted strings with escapes come out as written.
 */
export interface BearerChallenge {
  resourceMetadata?: string;
  scope?: string[];
  error?: string;
  errorDescription?: string;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+/;

/** Every challenge of the header as scheme + parameters; a token68 challenge gets no parameters. */
export function parseChallenges(header: string): { scheme: string; params: Record<string, string> }[] {
  const challenges: { scheme: string; params: Record<string, string> }[] = [];
  let rest = header.slice(0, 8192);
  let current: { scheme: string; params: Record<string, string> } | undefined;
  const skip = (re: RegExp) => {
    rest = rest.replace(re, '');
  };
  while (rest.length) {
    skip(/^[\s,]+/);
    const name = TOKEN.exec(rest)?.[0];
    if (!name) break;
    rest = rest.slice(name.length);
    const afterSpace = rest.replace(/^\s*/, '');
    if (afterSpace.startsWith('=') && current && !afterSpace.startsWith('==')) {
      rest = afterSpace.slice(1).replace(/^\s*/, '');
      let value: string;
      if (rest.startsWith('"')) {
        let i = 1;
        value = '';
        while (i < rest.length && rest[i] !== '"') {
          if (rest[i] === '\\' && i + 1 < rest.length) i++;
          value += rest[i];
          i++;
        }
        rest = rest.slice(i + 1);
      } else {
        // Lenient where servers are: an unquoted value runs to the next comma or space
        // (`scope=mcp:basic`, though `:` is not a token character).
        value = /^[^\s,]+/.exec(rest)?.[0] ?? '';
        rest = rest.slice(value.length);
      }
      const key = name.toLowerCase();
      if (!(key in current.params)) current.params[key] = value;
    } else {
      current = { scheme: name.toLowerCase(), params: {} };
      challenges.push(current);
      // A token68 credential-like value after the scheme has no parameters worth reading.
      skip(/^\s*[A-Za-z0-9\-._~+/]+=*\s*(?=,|$)/);
    }
  }
  return challenges;
}

/** The `Bearer` challenge's parameters, or undefined when the header has none. */
export function bearerChallenge(header: string | null | undefined): BearerChallenge | undefined {
  if (!header) return undefined;
  const bearer = parseChallenges(header).find((c) => c.scheme === 'bearer');
  if (!bearer) return undefined;
  const { params } = bearer;
  const scope = params.scope?.split(/\s+/).filter(Boolean);
  return {
    ...(params.resource_metadata && { resourceMetadata: params.resource_metadata }),
    ...(scope?.length && { scope }),
    ...(params.error && { error: params.error }),
    ...(params.error_description && { errorDescription: params.error_description }),
  };
}
