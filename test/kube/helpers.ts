import { Registry } from 'prom-client';
import { pollUntil } from '../helpers/wait.js';
import { systemClock, type Clock } from '../../src/time/clock.js';
import type { CacheTuning } from '../../src/kube/cache/reflector.js';
import type { Service } from '../../src/kube/objects.js';

/**
 * Polls `fn` until it returns a truthy value; on timeout fails naming `what`, the last value seen
 * and the last error (test/helpers/wait.ts; `timeoutMs` is scaled by the run's time factor).
 */
export async function waitFor<T>(
  fn: () => T | Promise<T>,
  what: string,
  { timeoutMs = 10_000, intervalMs = 25 } = {},
): Promise<NonNullable<T>> {
  return (await pollUntil(what, fn, Boolean, { timeoutMs, intervalMs })) as NonNullable<T>;
}

/** A logger whose JSON lines are kept for assertions (level debug). */
export { captureLogs as captureLogger } from '../helpers/logs.js';

export async function metricValue(
  reg: Registry,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const m = reg.getSingleMetric(name);
  if (!m) return 0;
  const data = await m.get();
  let sum = 0;
  for (const v of data.values) {
    const l = v.labels as Record<string, string | number>;
    if (Object.entries(labels).every(([k, want]) => String(l[k]) === want)) sum += v.value;
  }
  return sum;
}

export const newRegistry = (): Registry => new Registry();

/** Short timings for tests. */
export const fastTuning: Partial<CacheTuning> = {
  watchTimeoutSecondsRange: [20, 30],
  inactivityMs: 600,
  relistIntervalMs: 0,
  backoff: { initialMs: 20, maxMs: 300, jitter: 0.2, resetAfterMs: 5_000 },
  rewatchDelayMs: 20,
  minWatchMs: 100,
  pageSize: 3,
};

/** The real clock, recording every sleep it is asked for (to check delays without timing). */
export function recordingClock(): Clock & { sleeps: number[] } {
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => systemClock.now(),
    random: () => systemClock.random(),
    sleep: (ms, signal) => {
      sleeps.push(ms);
      return systemClock.sleep(ms, signal);
    },
  };
}

export function service(
  namespace: string,
  name: string,
  port = 80,
  labels: Record<string, string> = {},
): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace, labels: { test: 'kube', ...labels } },
    spec: {
      type: 'ClusterIP',
      selector: { app: name },
      ports: [{ name: 'http', protocol: 'TCP', port, targetPort: port }],
    },
  };
}

/** name → resourceVersion, for comparing a cache against a fresh listing. */
export function byName(
  objs: {
    metadata: { name: string; namespace?: string | undefined; resourceVersion?: string | undefined };
  }[],
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const o of objs)
    out[`${o.metadata.namespace ?? ''}/${o.metadata.name}`] = o.metadata.resourceVersion ?? '';
  return out;
}
