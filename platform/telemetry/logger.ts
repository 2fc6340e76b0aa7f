import { type Logger, pino } from 'pino';

/** Paths pino blanks out wherever they appear: credentials never reach a log line. */
const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.authorization',
  '*.accessToken',
  '*.refreshToken',
  '*.access_token',
  '*.refresh_token',
  '*.apiKey',
  '*.password',
  '*.secret',
  '*.clientSecret',
  '*.codeVerifier',
  '*.code',
  '*.state',
  '*.cookies',
  '*.fields',
  '*.token',
];

export function createLogger(options: { level: string; name?: string; destination?: pino.DestinationStream }): Logger {
  return pino(
    {
      name: options.name ?? 'switchboard',
      level: options.level,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      base: { pid: process.pid },
    },
    options.destination,
  );
}
