import { connect } from 'node:net';
import type { CoreV1Api, V1Service } from '@kubernetes/client-node';
import { ACME_AUTHTOKEN } from '../helpers/mock-api.js';
import type { PodPlace } from './kubesim-pods.js';
import type { ChartValues } from './target.js';

/** Which address behind a Service to dial: kube-proxy's choice among its ready endpoints. */
export type ServiceBackend = (service: V1Service) => Promise<string>;

/** The forwarder processes of a target without Pod objects listen on 127.0.0.1. */
const onHostLoopback: ServiceBackend = async () => '127.0.0.1';

/**
 * kube-proxy's choice for a cluster whose pods have IPs: one Running, Ready pod that the Service's
 * selector matches (what its EndpointSlices list as ready), at random; its pod IP.
 */
export function readyPodBackend(core: CoreV1Api): ServiceBackend {
  return async (service) => {
    const namespace = service.metadata?.namespace ?? '';
    const selector = Object.entries(service.spec?.selector ?? {})
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    const pods = (await core.listNamespacedPod({ namespace, labelSelector: selector })).items;
    const ready = pods.flatMap((p) =>
      !p.metadata?.deletionTimestamp &&
      p.status?.podIP &&
      p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')
        ? [p.status.podIP]
        : [],
    );
    const ip = ready[Math.floor(Math.random() * ready.length)];
    if (ip === undefined)
      throw new Error(`${namespace}/${service.metadata?.name}: no ready pod matches ${selector}`);
    return ip;
  };
}

/**
 * Cluster DNS and kube-proxy for targets whose pods are local processes (kubesim, the real
 * control plane with the node agent): name.namespace → the alias's externalName → the internal
 * Service → its targetPort on a forwarder (`backend` chooses where). Connects, sends `data`,
 * half-closes, and returns all that came back.
 */
export async function exchangeThroughAlias(
  core: CoreV1Api,
  host: string,
  port: number,
  data: string,
  backend: ServiceBackend = onHostLoopback,
): Promise<string> {
  const [name = '', ns = ''] = host.split('.');
  const alias = await core.readNamespacedService({ namespace: ns, name });
  const target = /^([^.]+)\.([^.]+)\.svc\./.exec(alias.spec?.externalName ?? '');
  if (!target) throw new Error(`${host} is not an alias: ${JSON.stringify(alias.spec)}`);
  const internal = await core.readNamespacedService({ namespace: target[2]!, name: target[1]! });
  const targetPort = internal.spec?.ports?.find((p) => p.port === port)?.targetPort;
  if (typeof targetPort !== 'number')
    throw new Error(`${host}:${port}: no such port on the internal Service`);
  const address = await backend(internal);
  return await new Promise<string>((res, rej) => {
    const s = connect({ host: address, port: targetPort, allowHalfOpen: true });
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
 * The flags that keep a pod's listeners on loopback: on the pod's own IP and its `http` container
 * port when a node agent placed it (as in a cluster: podIP:containerPort), else on 127.0.0.1 with
 * the HTTP server on a port the OS chooses.
 */
export function loopbackArgs(component: string, place?: PodPlace): string[] {
  const ip = place?.ip ?? '127.0.0.1';
  const http = place?.ports.get('http') ?? 0;
  if (component === 'controller') return ['--listen', `${ip}:${http}`];
  if (component === 'forwarder') return ['--listen-host', ip, '--http-listen', `${ip}:${http}`];
  return [];
}
