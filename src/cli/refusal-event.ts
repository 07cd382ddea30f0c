import { randomBytes } from 'node:crypto';
import type { KubeConfig } from '@kubernetes/client-node';
import { z } from 'zod';
import { KubeTransport } from '../kube/transport.js';

/**
 * The config-check hook's refusal where helm users look (issue #29 item 2): besides its log and
 * termination message, a Warning Event `ConfigRefused` in the release's namespace on the hook Job,
 * naming each refused setting (the first line of each problem: the setting and what is wrong) and
 * the fix. `kubectl get events -n <namespace>` shows it; the Job's log keeps the full text (the
 * CEL caret). The hook's ServiceAccount may create Events in that namespace only (the chart's
 * hook-scoped Role).
 */

/** `--refusal-event <namespace>/<job>`: where the Event goes. */
export interface RefusalTarget {
  namespace: string;
  job: string;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export function parseRefusalTarget(text: string): RefusalTarget | { problem: string } {
  const [namespace = '', job = '', ...rest] = text.split('/');
  if (rest.length || !DNS_LABEL.test(namespace) || !/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(job))
    return { problem: `--refusal-event: must be <namespace>/<job name>, got "${text}"` };
  return { namespace, job };
}

/** What a refused config's Event says: one line. Pure. */
export function refusalMessage(target: RefusalTarget, problems: readonly string[]): string {
  const named = problems.map((p) => (p.split('\n')[0] ?? '').trim()).filter((p) => p.length > 0);
  const message =
    `The config check refused these values: ${named.join('; ')}. ` +
    `Fix: correct that value and run helm upgrade --install with the same release name and flags ` +
    `(or helm uninstall, then helm install); kubectl -n ${target.namespace} logs job/${target.job} shows where.`;
  // An Event's message is meant to be short; the Job's log keeps everything.
  return message.length > 1024 ? `${message.slice(0, 1021)}...` : message;
}

/** The Event object. Pure but for the name's random suffix and the clock, given. */
export function refusalEvent(
  target: RefusalTarget,
  problems: readonly string[],
  now: Date,
  suffix: string,
  instance?: string,
): Record<string, unknown> {
  const ts = now.toISOString().replace(/\.\d+Z$/, 'Z');
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: `${target.job}.${suffix}`, namespace: target.namespace },
    involvedObject: { apiVersion: 'batch/v1', kind: 'Job', namespace: target.namespace, name: target.job },
    reason: 'ConfigRefused',
    message: refusalMessage(target, problems),
    type: 'Warning',
    count: 1,
    firstTimestamp: ts,
    lastTimestamp: ts,
    source: { component: 'endpoint-binder-config-check', ...(instance ? { host: instance } : {}) },
    reportingComponent: 'endpoint-binder-config-check',
    reportingInstance: instance ?? '',
  };
}

/** Creates the Event; the reason it could not, or undefined. */
export async function reportRefusal(
  kubeConfig: KubeConfig,
  target: RefusalTarget,
  problems: readonly string[],
): Promise<string | undefined> {
  const transport = new KubeTransport(kubeConfig, { timeoutMs: 10_000 });
  const body = refusalEvent(
    target,
    problems,
    new Date(),
    randomBytes(8).toString('hex'),
    process.env['HOSTNAME'],
  );
  try {
    await transport.json(
      { method: 'POST', path: `/api/v1/namespaces/${target.namespace}/events`, body },
      z.looseObject({}),
    );
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}
