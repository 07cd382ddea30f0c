/**
 * The forwarder's `/status` document: readiness, then one row per listener with the data-path
 * health of its URL as observed by this forwarder. Times are ISO strings and `now` is the
 * forwarder's own clock, so a reader computes "how long ago" without trusting its own clock.
 */
import { z } from 'zod';
import type { ListenerStatus } from './listeners.js';
import { dataPathText, type UrlHealthRecorder } from './url-health.js';

export const ForwarderUrlStatusSchema = z.object({
  port: z.number().int(),
  url: z.string(),
  listener: z.string(),
  /** The cell `status` shows, e.g. `ok 2s ago`, `upstream refused (ERR_730) 5s ago`, `no traffic yet`. */
  dataPath: z.string(),
  lastSuccessAt: z.string().optional(),
  lastFailure: z
    .object({ at: z.string(), code: z.string().optional(), title: z.string(), message: z.string() })
    .optional(),
  windowMinutes: z.number().int(),
  successes: z.number().int(),
  failures: z.number().int(),
});

export const ForwarderStatusSchema = z.object({
  ready: z.boolean(),
  reasons: z.array(z.string()),
  now: z.string(),
  urls: z.array(ForwarderUrlStatusSchema),
});

export type ForwarderStatus = z.infer<typeof ForwarderStatusSchema>;
export type ForwarderUrlStatus = z.infer<typeof ForwarderUrlStatusSchema>;

export function forwarderStatus(
  readiness: { ready: boolean; reasons: string[] },
  listeners: readonly ListenerStatus[],
  health: UrlHealthRecorder,
  now: number,
): ForwarderStatus {
  const iso = (ms: number) => new Date(ms).toISOString();
  return {
    ready: readiness.ready,
    reasons: readiness.reasons,
    now: iso(now),
    urls: listeners.map((l) => {
      const h = health.get(l.url, now);
      return {
        port: l.port,
        url: l.url,
        listener: l.state,
        dataPath: dataPathText(h, now),
        ...(h.lastSuccessAt !== undefined ? { lastSuccessAt: iso(h.lastSuccessAt) } : {}),
        ...(h.lastFailure ? { lastFailure: { ...h.lastFailure, at: iso(h.lastFailure.at) } } : {}),
        windowMinutes: h.windowMinutes,
        successes: h.successes,
        failures: h.failures,
      };
    }),
  };
}
