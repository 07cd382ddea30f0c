import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { K3sContainer, type StartedK3sContainer } from '@testcontainers/k3s';
import { k8sTool } from '../helpers/k8s-tools.js';
import { type ClusterProvider, type ClusterTools, dockerPreflight } from './cluster-target.js';
import { mustExec } from './exec.js';

/**
 * A k3s cluster in one privileged container, started by testcontainers. Its reaper (Ryuk) removes
 * the container when this process dies, so a crashed run leaves nothing behind. Environment:
 *   E2E_K3S_IMAGE      k3s image (default rancher/k3s:v1.31.2-k3s1; admission policies are GA from 1.30)
 *   E2E_KEEP_CLUSTER=1 keep the container afterwards (testcontainers' reaper still removes it at exit
 *                      unless TESTCONTAINERS_RYUK_DISABLED=true)
 *   E2E_IMAGE          image to test (default: built from the Dockerfile as endpoint-binder:e2e)
 */

export const DEFAULT_K3S_IMAGE = 'rancher/k3s:v1.31.2-k3s1';

/** What the k3s run needs, or why it cannot run here. */
export async function k3sPreflight(): Promise<{ tools: ClusterTools } | { skip: string }> {
  const kubectl = k8sTool('kubectl');
  if ('skip' in kubectl) return { skip: kubectl.skip };
  const helm = k8sTool('helm');
  if ('skip' in helm) return { skip: helm.skip };
  const docker = await dockerPreflight();
  if ('skip' in docker) return docker;
  return { tools: { docker: docker.docker, kubectl: kubectl.path, helm: helm.path } };
}

export async function startK3s(tools: ClusterTools, work: string): Promise<ClusterProvider> {
  const image = process.env['E2E_K3S_IMAGE'] ?? DEFAULT_K3S_IMAGE;
  const container: StartedK3sContainer = await new K3sContainer(image).start();
  const kubeconfig = join(work, 'kubeconfig');
  writeFileSync(kubeconfig, container.getKubeConfig(), { mode: 0o600 });
  return {
    name: `k3s ${image}`,
    kubeconfig,
    async loadImage(tag) {
      // k3s runs containerd: import the image saved by the host's Docker into its k8s.io namespace.
      const tar = join(work, 'image.tar');
      await mustExec(tools.docker, ['save', '-o', tar, tag], { timeoutMs: 10 * 60_000 });
      await container.copyFilesToContainer([{ source: tar, target: '/tmp/endpoint-binder-image.tar' }]);
      const r = await container.exec([
        'ctr',
        '-n',
        'k8s.io',
        'images',
        'import',
        '/tmp/endpoint-binder-image.tar',
      ]);
      if (r.exitCode !== 0) throw new Error(`k3s: importing ${tag} failed: ${r.output.trim()}`);
    },
    async close() {
      if (process.env['E2E_KEEP_CLUSTER'] !== '1') await container.stop();
    },
  };
}
