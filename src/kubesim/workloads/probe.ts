import { request } from 'node:http';
import { connect } from 'node:net';
import { z } from 'zod';

/**
 * The kubelet's readiness probe of a container: its settings (SetDefaults_Probe), the port a
 * named port refers to, one check (httpGet: a 2xx or 3xx answer within timeoutSeconds; tcpSocket:
 * a connection), and the threshold logic (successThreshold successes in a row make the container
 * ready, failureThreshold failures in a row unready). exec and grpc handlers are not run.
 */

const portSchema = z.union([z.number().int(), z.string()]);

export const probeSchema = z.looseObject({
  httpGet: z
    .looseObject({
      path: z.string().optional(),
      port: portSchema,
      host: z.string().optional(),
      scheme: z.string().optional(),
    })
    .optional(),
  tcpSocket: z.looseObject({ port: portSchema, host: z.string().optional() }).optional(),
  exec: z.looseObject({}).optional(),
  grpc: z.looseObject({}).optional(),
  initialDelaySeconds: z.number().int().min(0).default(0),
  timeoutSeconds: z.number().int().min(1).default(1),
  periodSeconds: z.number().int().min(1).default(10),
  successThreshold: z.number().int().min(1).default(1),
  failureThreshold: z.number().int().min(1).default(3),
});
export type Probe = z.infer<typeof probeSchema>;

export interface ProbeTarget {
  kind: 'http' | 'tcp';
  host: string;
  port: number;
  path: string;
}

/** Where a probe goes for a pod at `podIP`, or the one-line reason it cannot be run. */
export function probeTarget(
  probe: Probe,
  podIP: string,
  ports: readonly { name?: string; containerPort: number }[],
): ProbeTarget | { problem: string } {
  const handler = probe.httpGet ?? probe.tcpSocket;
  if (!handler) return { problem: 'kubesim runs httpGet and tcpSocket probes only' };
  if (probe.httpGet?.scheme === 'HTTPS') return { problem: 'kubesim runs httpGet probes over HTTP only' };
  let port: number | undefined;
  if (typeof handler.port === 'number') port = handler.port;
  else if (/^\d+$/.test(handler.port)) port = Number(handler.port);
  else port = ports.find((p) => p.name === handler.port)?.containerPort;
  if (port === undefined || port < 1 || port > 65535)
    return { problem: `probe port ${String(handler.port)} is not a port number or a named container port` };
  return {
    kind: probe.httpGet ? 'http' : 'tcp',
    host: handler.host ?? podIP,
    port,
    path: probe.httpGet?.path ?? '/',
  };
}

/** One probe: true for a pass. Never throws. */
export function runProbe(target: ProbeTarget, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (ok: boolean): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(ok);
    };
    const timer = setTimeout(() => {
      done(false);
      cleanup();
    }, timeoutMs);
    let cleanup = (): void => {};
    if (target.kind === 'tcp') {
      const s = connect({ host: target.host, port: target.port });
      cleanup = () => s.destroy();
      s.once('connect', () => {
        s.destroy();
        done(true);
      });
      s.once('error', () => done(false));
      return;
    }
    const req = request(
      {
        host: target.host,
        port: target.port,
        path: target.path,
        method: 'GET',
        agent: false,
        headers: { 'user-agent': 'kube-probe/kubesim' },
      },
      (res) => {
        res.resume();
        const status = res.statusCode ?? 0;
        done(status >= 200 && status < 400);
      },
    );
    cleanup = () => req.destroy();
    req.once('error', () => done(false));
    req.end();
  });
}

export interface ProbeState {
  ready: boolean;
  successes: number;
  failures: number;
}

export const initialProbeState: ProbeState = { ready: false, successes: 0, failures: 0 };

/** prober.worker's result handling: thresholds of consecutive results flip the readiness. */
export function nextProbeState(
  state: ProbeState,
  ok: boolean,
  probe: Pick<Probe, 'successThreshold' | 'failureThreshold'>,
): ProbeState {
  const successes = ok ? state.successes + 1 : 0;
  const failures = ok ? 0 : state.failures + 1;
  let ready = state.ready;
  if (ok && successes >= probe.successThreshold) ready = true;
  if (!ok && failures >= probe.failureThreshold) ready = false;
  return { ready, successes, failures };
}
