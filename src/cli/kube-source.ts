import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { kubeConfigFrom, type KubeConfigSource } from '../kube/index.js';

/**
 * The CLI's kubeconfig, with the two mistakes a person makes named as such (issue #29 item 7):
 * no configuration anywhere (the client would otherwise try http://localhost:8080 and fail on
 * TLS settings), and a --context the file does not have (the client would say "no current
 * cluster"). The search order is the client's: --kubeconfig, KUBECONFIG, ~/.kube/config, then
 * the in-cluster service account.
 */
export function cliKubeConfig(
  src: KubeConfigSource,
  env: Record<string, string | undefined> = process.env,
  home: string = homedir(),
): KubeConfig {
  if (!src.kubeconfigPath && !src.inCluster && !anyDefaultSource(env, home))
    throw new Error(
      'no Kubernetes configuration found (no --kubeconfig, no KUBECONFIG, no ~/.kube/config, not in a cluster); set --kubeconfig <file>, or run it in the cluster',
    );
  if (src.context) {
    const kc = new KubeConfig();
    if (src.kubeconfigPath) kc.loadFromFile(src.kubeconfigPath);
    else kc.loadFromDefault();
    const names = kc.getContexts().map((c) => c.name);
    if (!names.includes(src.context))
      throw new Error(
        `${src.kubeconfigPath ? `kubeconfig ${src.kubeconfigPath}` : 'the kubeconfig'} has no context "${src.context}" (${names.length ? `it has: ${names.join(', ')}` : 'it has none'}); set --context to one of them`,
      );
  }
  return kubeConfigFrom(src);
}

function anyDefaultSource(env: Record<string, string | undefined>, home: string): boolean {
  const listed = (env['KUBECONFIG'] ?? '').split(delimiter).filter((p) => p.length > 0);
  if (listed.some((p) => existsSync(p))) return true;
  if (existsSync(join(home, '.kube', 'config'))) return true;
  return (
    Boolean(env['KUBERNETES_SERVICE_HOST']) &&
    existsSync('/var/run/secrets/kubernetes.io/serviceaccount/token')
  );
}
