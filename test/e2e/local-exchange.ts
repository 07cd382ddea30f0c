import { connect } from 'node:net';
import type { CoreV1Api } from '@kubernetes/client-node';

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
