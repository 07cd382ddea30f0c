import { writeFile } from 'node:fs/promises';
import { KubeConfig } from '@kubernetes/client-node';
import { stringify } from 'yaml';

/**
 * Client configuration pointing at kubesim. Over HTTPS the cluster entry trusts kubesim's
 * self-signed certificate. Over plain HTTP, client-node refuses the cluster unless TLS
 * verification is "skipped", hence the flag; note that kubectl (client-go) sends no bearer
 * token over plain HTTP, so use TLS for kubectl.
 */

const NAME = 'kubesim';

function clusterEntry(url: string, caPem: string | undefined) {
  return caPem
    ? { server: url, 'certificate-authority-data': Buffer.from(caPem).toString('base64') }
    : { server: url, 'insecure-skip-tls-verify': true };
}

export function buildKubeConfig(
  url: string,
  token: string,
  caPem?: string,
  namespace = 'default',
): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [
      caPem
        ? { name: NAME, server: url, caData: Buffer.from(caPem).toString('base64'), skipTLSVerify: false }
        : { name: NAME, server: url, skipTLSVerify: true },
    ],
    users: [{ name: NAME, token }],
    contexts: [{ name: NAME, cluster: NAME, user: NAME, namespace }],
    currentContext: NAME,
  });
  return kc;
}

export function kubeconfigYaml(url: string, token: string, caPem?: string, namespace = 'default'): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: NAME, cluster: clusterEntry(url, caPem) }],
    users: [{ name: NAME, user: { token } }],
    contexts: [{ name: NAME, context: { cluster: NAME, user: NAME, namespace } }],
    'current-context': NAME,
    preferences: {},
  });
}

/** Written with mode 0600: the file holds a bearer token. */
export async function writeKubeconfigFile(
  path: string,
  url: string,
  token: string,
  caPem?: string,
): Promise<void> {
  await writeFile(path, kubeconfigYaml(url, token, caPem), { mode: 0o600 });
}
