import type { NextFunction, Request, Response } from 'express';
import { LRUCache } from 'lru-cache';
import { isOwnHost, isOwnOrigin } from '../../core/own-origins.js';
import type { ServiceContext } from '../../features/context.js';
import { messagePage } from '../portal/html.js';
import { uiOrigins } from './codec-endpoint.js';

/**
 * DNS rebinding defence for every route, ahead of all of them. A page on an attacker's name that
 * re-resolves to this server's address calls us "same-origin": its requests carry the attacker's
 * name in `Host` (421 here) and, for anything but a simple GET, its origin in `Origin` (403 here).
 * The MCP transport spec requires the Origin check; the Host check is what stops GETs, which
 * browsers send without Origin. Temporal UI's origins (TEMPORAL_UI_ORIGINS) may call /codec only.
 */
export function hostOriginGuard(ctx: ServiceContext) {
  const { config } = ctx;
  const codecOrigins = new Set(uiOrigins(ctx));
  const ownHost = new URL(config.PUBLIC_BASE_URL).host;
  // Verdicts remembered: every request asks, with the same few values, and each answer parses URLs.
  const ownHosts = rememberedVerdicts((host: string) => isOwnHost(config, host));
  const ownOrigins = rememberedVerdicts((origin: string) => isOwnOrigin(config, origin));
  return (req: Request, res: Response, next: NextFunction) => {
    const host = req.headers.host;
    if (host === undefined || !ownHosts(host)) {
      const named = host ? `"${host.slice(0, 100)}"` : 'no host';
      return refuse(req, res, 421, `This server does not answer for ${named}: use ${ownHost} (PUBLIC_BASE_URL) or a host in ALLOWED_HOSTS`);
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !ownOrigins(origin) && !(isCodecPath(req.path) && codecOrigins.has(origin))) {
      return refuse(
        req,
        res,
        403,
        `Requests from pages at ${origin.slice(0, 100)} are refused: only ${new URL(config.PUBLIC_BASE_URL).origin}'s own pages may call this server${isCodecPath(req.path) ? ' (and TEMPORAL_UI_ORIGINS for /codec)' : ''}`,
      );
    }
    next();
  };
}

/** Values a client sends are its own choice: the remembered ones are bounded in count, and in length. */
const REMEMBERED_VERDICTS = 256;
const REMEMBERED_VALUE_MAX = 300;

function rememberedVerdicts(verdict: (value: string) => boolean): (value: string) => boolean {
  const known = new LRUCache<string, boolean>({ max: REMEMBERED_VERDICTS });
  return (value) => {
    const seen = known.get(value);
    if (seen !== undefined) return seen;
    const answer = verdict(value);
    if (value.length <= REMEMBERED_VALUE_MAX) known.set(value, answer);
    return answer;
  };
}

const isCodecPath = (path: string) => path === '/codec' || path.startsWith('/codec/');

function refuse(req: Request, res: Response, status: 403 | 421, message: string) {
  req.log?.warn({ host: req.headers.host?.slice(0, 100), origin: req.headers.origin?.slice(0, 100), status }, 'refused Host or Origin');
  if (req.method === 'GET' && req.accepts(['json', 'html']) === 'html') {
    return res.status(status).send(messagePage(status === 421 ? 'Wrong address' : 'Refused', message, 'bad'));
  }
  res.status(status).json({ error: message });
}
