import type { ManagementClient } from '../api/client/index.js';
import {
  ORPHANED_ANNOTATION,
  isOwnedBy,
  ownershipSelector,
  type InstallIdentity,
} from '../binding/identity.js';
import {
  collectionPath,
  isConflict,
  isNotFound,
  keyOf,
  kinds,
  listAll,
  type KubeClient,
  type Service,
} from '../kube/index.js';
import type { Logger } from '../log/logger.js';

export type UninstallPolicy = 'delete' | 'retain';

export interface UninstallReport {
  policy: UninstallPolicy;
  deleted: string[];
  orphaned: string[];
  failed: { service: string; error: string }[];
  deregistered: string[];
}

/**
 * What `helm uninstall`'s pre-delete hook runs. `delete`: every Service of this install is
 * deleted (uid precondition, ownership checked on the live object) and the operator record is
 * deregistered. `retain`: Services stay and get the `endpoint-binder.io/orphaned` annotation, so
 * nobody mistakes them for managed ones; the registration stays for a later install to adopt
 * (which also clears the mark). Foreign Services are never touched.
 */
export async function uninstall(opts: {
  kube: KubeClient;
  api: ManagementClient | undefined;
  identity: InstallIdentity;
  policy: UninstallPolicy;
  log: Logger;
  now?: () => Date;
}): Promise<UninstallReport> {
  const { kube, identity, policy, log } = opts;
  const report: UninstallReport = { policy, deleted: [], orphaned: [], failed: [], deregistered: [] };
  const { items } = await listAll({
    transport: kube.transport,
    path: collectionPath(kinds.service),
    labelSelector: ownershipSelector(identity),
    schema: kinds.service.schema,
  });
  const stamp = (opts.now?.() ?? new Date()).toISOString();
  for (const svc of items) {
    const key = keyOf(svc);
    if (!isOwnedBy(svc, identity)) continue;
    try {
      if (policy === 'delete') {
        await kube.deleteIfExists(kinds.service, svc.metadata.namespace, svc.metadata.name, {
          ...(svc.metadata.uid ? { uid: svc.metadata.uid } : {}),
        });
        report.deleted.push(key);
      } else {
        await markOrphaned(kube, svc, stamp);
        report.orphaned.push(key);
      }
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      log.warn({ service: key, error }, 'uninstall could not handle a Service');
      report.failed.push({ service: key, error });
    }
  }
  if (policy === 'delete' && opts.api) {
    for await (const op of opts.api.kubernetesOperators.list()) {
      if (op.deployment.name === identity.release && op.deployment.namespace === identity.operatorNamespace) {
        await opts.api.kubernetesOperators.delete(op.id);
        report.deregistered.push(op.id);
      }
    }
  }
  log.info(
    {
      policy,
      deleted: report.deleted.length,
      orphaned: report.orphaned.length,
      failed: report.failed.length,
      deregistered: report.deregistered,
    },
    'uninstall done',
  );
  return report;
}

async function markOrphaned(kube: KubeClient, svc: Service, stamp: string): Promise<void> {
  let live: Service | undefined = svc;
  for (let attempt = 0; attempt < 5 && live; attempt++) {
    if (live.metadata.annotations?.[ORPHANED_ANNOTATION]) return;
    const next: Service = {
      ...live,
      metadata: {
        ...live.metadata,
        annotations: { ...(live.metadata.annotations ?? {}), [ORPHANED_ANNOTATION]: stamp },
      },
    };
    try {
      await kube.replace(kinds.service, next);
      return;
    } catch (err) {
      if (isNotFound(err)) return;
      if (!isConflict(err)) throw err;
    }
    live = await kube.get(kinds.service, svc.metadata.namespace, svc.metadata.name);
  }
}
