import { createLogger, type Logger } from '../../src/log/logger.js';

export interface CapturedLogs {
  /** The project's logger (redaction included), writing into `raw` and `lines`. */
  logger: Logger;
  /** Every JSON line as written. */
  raw: string[];
  /** The same lines, parsed. */
  lines: Record<string, unknown>[];
  /** How many lines carry this `msg`. */
  count(msg: string): number;
}

/** A logger whose output is kept for assertions instead of printed. */
export function captureLogs(level = 'debug'): CapturedLogs {
  const raw: string[] = [];
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({
    level,
    destination: {
      write(chunk: string) {
        for (const line of chunk.split('\n')) {
          if (!line.trim()) continue;
          raw.push(line);
          lines.push(JSON.parse(line) as Record<string, unknown>);
        }
      },
    },
  });
  return { logger, raw, lines, count: (msg) => lines.filter((l) => l['msg'] === msg).length };
}
