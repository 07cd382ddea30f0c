import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger } from 'pino';

/**
 * Every secret-bearing field name we use anywhere. pino's redaction works on paths, so the
 * same names are listed at the top level and one or two levels down (request headers, configs).
 */
const SECRET_KEYS = [
  'apiKey',
  'api_key',
  'authtoken',
  'authToken',
  'token',
  'authorization',
  'password',
  'secret',
  'client_secret',
];
export const REDACT_PATHS: string[] = [
  ...SECRET_KEYS,
  ...SECRET_KEYS.map((k) => `*.${k}`),
  ...SECRET_KEYS.map((k) => `*.*.${k}`),
  'req.headers.authorization',
  'req.headers.cookie',
];

export interface LoggerOptions {
  level?: string;
  name?: string;
  /** Where the JSON lines go; defaults to stdout. Tests pass a capturing stream. */
  destination?: DestinationStream;
}

export function createLogger(opts: LoggerOptions = {}): Logger {
  return pino(
    {
      level: opts.level ?? process.env['LOG_LEVEL'] ?? 'info',
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      // No pid or hostname on every line (pino's default base); the logger's name when it has one.
      base: opts.name ? { name: opts.name } : null,
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    opts.destination,
  );
}

/** A logger that drops everything; for library callers that pass none. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
