import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startKubesim } from '../../src/kubesim/index.js';

/**
 * What forwarder processes of a bench need besides an ingress: a temporary directory, the
 * ingress's CA in a file there, and kubesim with the operator namespace and a kubeconfig for it.
 */
export async function forwarderWorld(prefix: string, namespace: string, caPem: string) {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const caFile = join(dir, 'ingress-ca.pem');
  await writeFile(caFile, caPem);
  const sim = await startKubesim({ initialNamespaces: ['default', namespace] });
  const kubeconfig = join(dir, 'kubeconfig');
  await sim.writeKubeconfig(kubeconfig);
  return { dir, caFile, sim, kubeconfig };
}
