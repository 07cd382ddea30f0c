import type { KubeConfig } from '@kubernetes/client-node';

/** The chart's values, as a `-f` file would hold them (see charts/endpoint-binder/values.yaml). */
export type ChartValues = Record<string, unknown>;

/**
 * A cluster with endpoint-binder installable in it: what the scenario (scenario.ts) needs, and
 * nothing about how it is provided. The kind target (kind.ts) installs the chart with helm; a
 * kubesim target runs the controller and forwarder as local processes with the config files the
 * chart renders from the same values.
 */
export interface E2eTarget {
  readonly name: string;
  /** Helm release name and operator namespace: the install identity. */
  readonly release: string;
  readonly namespace: string;
  /** The mock management API as the test process reaches it, and the account's API key. */
  readonly api: { baseUrl: string; apiKey: string };
  /** An upstream_url the mock's binding ingress can dial that echoes every byte back. */
  readonly echoUpstream: string;
  /** Values every install needs in this target (image, API URL, credentials, CA bundle). */
  readonly baseValues: ChartValues;
  /** Namespaces that exist in the cluster besides the operator's (aliases go there). */
  readonly appNamespaces: readonly string[];
  kubeConfig(): KubeConfig;
  /** helm install (or the equivalent); resolves once the controller and forwarders are ready. */
  install(values: ChartValues): Promise<void>;
  /** helm upgrade with these values (not merged with the previous ones). */
  upgrade(values: ChartValues): Promise<void>;
  /** helm uninstall, running the pre-delete hook (the uninstall policy of the installed values). */
  uninstall(): Promise<void>;
  /** Deletes a pod of the install (its Deployment starts a replacement). */
  deletePod(name: string): Promise<void>;
  /** From a pod in the cluster: connect to host:port, send data, half-close, return all that came back. */
  exchange(host: string, port: number, data: string): Promise<string>;
  close(): Promise<void>;
}
