import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Ajv } from 'ajv';
import { deref, inlineSchema, isObject, type JsonObject, type OpenApiDocument } from '../../providers/openapi/document.js';
import { METHODS } from '../../providers/openapi/operations.js';

/**
 * A fake service built from an OpenAPI document (GitHub's, in the tests): every request is checked
 * against the document — an operation with that method and a path that fits its template, every
 * query parameter declared, every required one present, the JSON body valid against the
 * operation's schema — and answered `{operationId, path: {…}, query: {…}, body}` (200), or a 400
 * saying what did not fit. Each request is recorded, with its Authorization header.
 */

export interface SeenRequest {
  method: string;
  url: string;
  operationId?: string;
  authorization?: string;
  problem?: string;
}

export interface FakeOpenApiServer {
  baseUrl: string;
  seen: SeenRequest[];
  /** Access tokens answered 401 (then forgotten: the next request with a new token passes). */
  rejectToken(token: string): void;
  close(): Promise<void>;
}

interface Template {
  method: string;
  regex: RegExp;
  names: string[];
  literals: number;
  operation: JsonObject;
  parameters: JsonObject[];
}

function templatesOf(doc: OpenApiDocument): Template[] {
  const out: Template[] = [];
  for (const [path, item] of Object.entries(doc.root.paths as JsonObject)) {
    const pathItem = deref(doc, item, path) as JsonObject;
    for (const method of METHODS) {
      const operation = pathItem[method];
      if (!isObject(operation)) continue;
      const names: string[] = [];
      const source = path
        .split(/(\{[^}]*\})/)
        .map((part) => {
          const m = /^\{([^}]*)\}$/.exec(part);
          if (!m) return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
          names.push(m[1]);
          return '([^/]+)';
        })
        .join('');
      const parameters = [...((pathItem.parameters as JsonObject[]) ?? []), ...((operation.parameters as JsonObject[]) ?? [])].map(
        (p, i) => deref(doc, p, `${path}.${method}.parameters[${i}]`) as JsonObject,
      );
      out.push({
        method: method.toUpperCase(),
        regex: new RegExp(`^${source}$`),
        names,
        literals: path.replace(/\{[^}]*\}/g, '').length,
        operation,
        parameters,
      });
    }
  }
  return out;
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startFakeOpenApiServer(doc: OpenApiDocument, options: { basePath?: string } = {}): Promise<FakeOpenApiServer> {
  const templates = templatesOf(doc);
  const ajv = new Ajv({ strict: false, allErrors: false, validateFormats: false });
  const validators = new Map<JsonObject, ReturnType<Ajv['compile']>>();
  const rejected = new Set<string>();
  const seen: SeenRequest[] = [];
  const basePath = options.basePath ?? '';

  const check = (method: string, url: URL, body: string): { operationId: string; answer: unknown } | { problem: string } => {
    if (!url.pathname.startsWith(`${basePath}/`)) return { problem: `${url.pathname} is outside ${basePath}` };
    // The path as received, undecoded: a template segment is one raw segment.
    const rawPath = url.pathname.slice(basePath.length);
    const candidates = templates.filter((t) => t.method === method && t.regex.test(rawPath)).sort((a, b) => b.literals - a.literals);
    const match = candidates[0];
    if (!match) return { problem: `no operation ${method} ${rawPath}` };
    const values = match.regex.exec(rawPath)!.slice(1).map(decodeURIComponent);
    const path = Object.fromEntries(match.names.map((n, i) => [n, values[i]]));
    const declared = new Set(match.parameters.filter((p) => p.in === 'query').map((p) => p.name as string));
    for (const key of url.searchParams.keys()) if (!declared.has(key)) return { problem: `query parameter ${key} is not declared` };
    for (const p of match.parameters) {
      if (p.required === true && p.in === 'query' && !url.searchParams.has(p.name as string))
        return { problem: `query parameter ${p.name} is required` };
    }
    let parsed: unknown;
    const requestBody = deref(doc, match.operation.requestBody, 'requestBody');
    if (isObject(requestBody)) {
      const media = isObject(requestBody.content) ? (requestBody.content['application/json'] as JsonObject | undefined) : undefined;
      if (!body && requestBody.required === true) return { problem: 'the request body is required' };
      if (body) {
        try {
          parsed = JSON.parse(body);
        } catch {
          return { problem: 'the body is not JSON' };
        }
        if (media) {
          let validate = validators.get(media);
          if (!validate) {
            validate = ajv.compile(inlineSchema(doc, media.schema, 'body', { maxDepth: 12, maxNodes: 4000 }));
            validators.set(media, validate);
          }
          if (!validate(parsed)) return { problem: `body${validate.errors?.[0]?.instancePath ?? ''} ${validate.errors?.[0]?.message}` };
        }
      }
    } else if (body) return { problem: 'this operation takes no body' };
    const operationId = String(match.operation.operationId);
    return { operationId, answer: { operationId, path, query: Object.fromEntries(url.searchParams), body: parsed ?? null } };
  };

  const server = createServer(async (req, res) => {
    const body = await bodyOf(req);
    const url = new URL(req.url ?? '/', 'http://fake');
    const authorization = req.headers.authorization;
    const record: SeenRequest = { method: req.method ?? 'GET', url: req.url ?? '/', authorization };
    seen.push(record);
    const token = authorization?.replace(/^Bearer /, '');
    if (token && rejected.has(token)) {
      rejected.delete(token);
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"message":"Bad credentials"}');
      return;
    }
    const result = check(record.method, url, body);
    if ('problem' in result) {
      record.problem = result.problem;
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ message: result.problem }));
      return;
    }
    record.operationId = result.operationId;
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(result.answer));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}${basePath}`,
    seen,
    rejectToken: (t) => rejected.add(t),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
