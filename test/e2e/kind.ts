import { join } from 'node:path';
import { k8sTool } from '../helpers/k8s-tools.js';
import { type ClusterProvider, type ClusterTools, dockerPreflight } from './cluster-target.js';
import { exec, mustExec } from './exec.js';

/**
 * The kind cluster for the container e2e run. Environment:
 *   KIND                       the kind binary (default: kind on PATH)
 *   E2E_KIND_CLUSTER           cluster name (default endpoint-binder-e2e); created unless it exists
 *   E2E_KEEP_CLUSTER=1         keep the cluster afterwards (it is deleted only if this run created it)
 *   E2E_IMAGE                  image to test (default: built from the Dockerfile as endpoint-binder:e2e)
 */

export interface KindTools extends ClusterTools {
  kind: string;
}

/** What the kind run needs, or why it cannot run here. */
export async function kindPreflight(): Promise<{ tools: KindTools } | { skip: string }> {
  const kubectl = k8sTool('kubectl');
  if ('skip' in kubectl) return { skip: kubectl.skip };
  const helm = k8sTool('helm');
  if ('skip' in helm) return { skip: helm.skip };
  const docker = await dockerPreflight();
  if ('skip' in docker) return docker;
  const kind = process.env['KIND'] ?? 'kind';
  const version = await exec(kind, ['version'], { timeoutMs: 20_000 }).catch((err: Error) => ({
    code: 127,
    stdout: '',
    stderr: err.message,
  }));
  if (version.code !== 0) {
    return {
      skip: `kind is not installed (${version.stderr.trim()}); see docs/install.md, "End-to-end tests"`,
    };
  }
  return { tools: { docker: docker.docker, kind, kubectl: kubectl.path, helm: helm.path } };
}

/** Creates the kind cluster (or exports the kubeconfig of an existing one). */
export async function startKind(tools: KindTools, work: string): Promise<ClusterProvider> {
  const kubeconfig = join(work, 'kubeconfig');
  const cluster = process.env['E2E_KIND_CLUSTER'] ?? 'endpoint-binder-e2e';
  const existing = (await mustExec(tools.kind, ['get', 'clusters'])).split('\n').map((l) => l.trim());
  const created = !existing.includes(cluster);
  if (created) {
    await mustExec(
      tools.kind,
      ['create', 'cluster', '--name', cluster, '--wait', '180s', '--kubeconfig', kubeconfig],
      { timeoutMs: 10 * 60_000 },
    );
  } else {
    await mustExec(tools.kind, ['export', 'kubeconfig', '--name', cluster, '--kubeconfig', kubeconfig]);
  }
  return {
    name: `kind cluster ${cluster}`,
    kubeconfig,
    async loadImage(image) {
      await mustExec(tools.kind, ['load', 'docker-image', image, '--name', cluster], {
        timeoutMs: 10 * 60_000,
      });
    },
    async close() {
      if (created && process.env['E2E_KEEP_CLUSTER'] !== '1') {
        await exec(tools.kind, ['delete', 'cluster', '--name', cluster], { timeoutMs: 5 * 60_000 });
      }
    },
  };
}
