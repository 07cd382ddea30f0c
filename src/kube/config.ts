import { KubeConfig } from '@kubernetes/client-node';

export interface KubeConfigSource {
  /** A kubeconfig file; wins over everything else. */
  kubeconfigPath?: string;
  /** Use the pod's service account (token file re-read as it rotates). */
  inCluster?: boolean;
  /** Context to select in a kubeconfig file. */
  context?: string;
}

/**
 * Loads a KubeConfig: an explicit file, or in-cluster config, or client-node's default search
 * (KUBECONFIG, ~/.kube/config, in-cluster). Fails early when no cluster results.
 */
export function kubeConfigFrom(src: KubeConfigSource = {}): KubeConfig {
  const kc = new KubeConfig();
  if (src.kubeconfigPath) kc.loadFromFile(src.kubeconfigPath);
  else if (src.inCluster) kc.loadFromCluster();
  else kc.loadFromDefault();
  if (src.context) kc.setCurrentContext(src.context);
  const cluster = kc.getCurrentCluster();
  if (!cluster?.server) {
    throw new Error(
      src.kubeconfigPath
        ? `kubeconfig ${src.kubeconfigPath}: no current cluster`
        : 'no Kubernetes configuration found (set --kubeconfig or run in a cluster)',
    );
  }
  return kc;
}
