import { writeFile } from 'node:fs/promises';
import { KubeConfig } from '@kubernetes/client-node';
import { stringify } from 'yaml';

/**
 * Client configuration pointing at kubesim. The server is plain HTTP on loopback, and
 * client-node refuses an http:// cluster unless TLS verification is skipped, hence the flag.
 */

const NAME = 'kubesim';

export function buildKubeConfig(url: string, token: string, namespace = 'default'): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: NAME, server: url, skipTLSVerify: true }],
    users: [{ name: NAME, token }],
    contexts: [{ name: NAME, cluster: NAME, user: NAME, namespace }],
    currentContext: NAME,
  });
  return kc;
}

export function kubeconfigYaml(url: string, token: string, namespace = 'default'): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: NAME, cluster: { server: url, 'insecure-skip-tls-verify': true } }],
    users: [{ name: NAME, user: { token } }],
    contexts: [{ name: NAME, context: { cluster: NAME, user: NAME, namespace } }],
    'current-context': NAME,
    preferences: {},
  });
}

/** Written with mode 0600: the file holds a bearer token. */
export async function writeKubeconfigFile(path: string, url: string, token: string): Promise<void> {
  await writeFile(path, kubeconfigYaml(url, token), { mode: 0o600 });
}
