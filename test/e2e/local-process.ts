import { connect } from 'node:net';
import type { CoreV1Api } from '@kubernetes/client-node';
import { ACME_AUTHTOKEN } from '../helpers/mock-api.js';
import type { ChartValues } from './target.js';

/**
 * Cluster DNS and kube-proxy for targets whose pods are local processes (kubesim, the real
 * control plane with the node agent): name.namespace → the alias's externalName → the internal
 * Service → its targetPort, where the one forwarder process listens on loopback. Connects, sends
 * `data`, half-closes, and returns all that came back.
 */
export async function exchangeThroughAlias(
  core: CoreV1Api,
  host: string,
  port: number,
  data: string,
): Promise<string> {
  const [name = '', ns = ''] = host.split('.');
  const alias = await core.readNamespacedService({ namespace: ns, name });
  const target = /^([^.]+)\.([^.]+)\.svc\./.exec(alias.spec?.externalName ?? '');
  if (!target) throw new Error(`${host} is not an alias: ${JSON.stringify(alias.spec)}`);
  const internal = await core.readNamespacedService({ namespace: target[2]!, name: target[1]! });
  const targetPort = internal.spec?.ports?.find((p) => p.port === port)?.targetPort;
  if (typeof targetPort !== 'number')
    throw new Error(`${host}:${port}: no such port on the internal Service`);
  return await new Promise<string>((res, rej) => {
    const s = connect({ host: '127.0.0.1', port: targetPort, allowHalfOpen: true });
    const chunks: Buffer[] = [];
    s.setTimeout(20_000, () => s.destroy(new Error('timeout')));
    s.on('connect', () => s.end(data));
    s.on('data', (c: Buffer) => chunks.push(c));
    s.on('error', rej);
    s.on('end', () => {
      res(Buffer.concat(chunks).toString());
      s.destroy();
    });
  });
}

/**
 * The chart values every local-process target needs: the mock API, plain ingress on loopback, a
 * forwarder port window of its own (`portBase`..+249), one forwarder (on one host two processes
 * cannot listen on the same ports), quick drains and leader elections, and a short grace for
 * foreign names so the scenario's name conflict resolves within a step.
 */
export function localProcessValues(apiUrl: string, apiKey: string, portBase: number): ChartValues {
  return {
    api: { baseUrl: apiUrl },
    credentials: { apiKey, authtoken: ACME_AUTHTOKEN },
    bindings: {
      portRange: { min: portBase, max: portBase + 249 },
      ingress: { tls: false },
      foreignNameGraceSeconds: 2,
    },
    forwarder: { replicas: 1, drain: { delaySeconds: 0, timeoutSeconds: 1 } },
    controller: {
      leaderElection: { leaseDurationSeconds: 3, renewDeadlineSeconds: 2, retryPeriodSeconds: 0.5 },
    },
  };
}

/**
 * The flags that keep a pod's listeners on loopback: the HTTP server on the port the node agent
 * gave the pod's `http` port (0, the OS's choice, without one), the forwarder's ports on 127.0.0.1.
 */
export function loopbackArgs(component: string, ports?: ReadonlyMap<string | number, number>): string[] {
  const http = ports?.get('http') ?? 0;
  if (component === 'controller') return ['--listen', `127.0.0.1:${http}`];
  if (component === 'forwarder') return ['--listen-host', '127.0.0.1', '--http-listen', `127.0.0.1:${http}`];
  return [];
}
