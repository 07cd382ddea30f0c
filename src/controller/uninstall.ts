import { randomUUID } from 'node:crypto';
import {
  anchorOwned,
  ORPHANED_ANNOTATION,
  isOwnedBy,
  ownershipSelector,
  type InstallIdentity,
} from '../binding/ownership/index.js';
import type { ManagementClient } from '../api/client/index.js';
import { STATE_LABEL } from '../binding/identity.js';
import {
  collectionPath,
  isAlreadyExists,
  isConflict,
  isNotFound,
  keyOf,
  kinds,
  listAll,
  retryOnConflict,
  type KubeClient,
  type Service,
} from '../kube/index.js';
import { microTime } from '../kube/leader/record.js';
import {
  UNINSTALLED_AT_ANNOTATION,
  isUninstallHolder,
  uninstallHolder,
} from '../kube/leader/uninstall-mark.js';
import type { Logger } from '../log/logger.js';
import type { Clock } from '../time/clock.js';
import { withProgress } from '../time/progress.js';

export { UNINSTALLED_AT_ANNOTATION, isUninstallHolder } from '../kube/leader/uninstall-mark.js';
/** Helm deletes the Deployments right after the hook; their pods are gone well within this. */
export const DEFAULT_HOLD_SECONDS = 120;

/**
 * Makes the running controllers stand down before anything is deleted: the uninstall takes the
 * controller's Lease (`<release>-controller`) as `uninstall/<run uid>` and marks it
 * (`endpoint-binder.io/uninstalled-at`). A controller that sees either stands down for the life
 * of its process (src/kube/leader/uninstall-mark.ts); the leader sees it at its next renewal, at
 * the latest its renew deadline ends its term, which is waited out here. `releaseUninstallHold`
 * gives the Lease up at the end, so a new install leads at once.
 */
export async function standDownControllers(opts: {
  kube: KubeClient;
  identity: InstallIdentity;
  /** `uninstall/<uid>`: the holder this run writes. */
  holder: string;
  renewDeadlineMs: number;
  /** How long the uninstall holds the lease: long enough for Helm to delete the Deployments. */
  holdSeconds?: number;
  log: Logger;
  sleep?: (ms: number) => Promise<void>;
}): Promise<{ previousHolder: string | undefined }> {
  const { kube, identity, log } = opts;
  const name = `${identity.release}-controller`;
  const ns = identity.operatorNamespace;
  const take = async (): Promise<{ previousHolder: string | undefined }> => {
    const now = microTime(Date.now());
    const live = await kube.get(kinds.lease, ns, name);
    const mark = { [UNINSTALLED_AT_ANNOTATION]: new Date().toISOString() };
    const spec = {
      holderIdentity: opts.holder,
      leaseDurationSeconds: opts.holdSeconds ?? DEFAULT_HOLD_SECONDS,
      acquireTime: now,
      renewTime: now,
    };
    if (!live) {
      await kube.create(kinds.lease, {
        metadata: { name, namespace: ns, annotations: mark },
        spec: { ...spec, leaseTransitions: 0 },
      });
      log.info({ lease: `${ns}/${name}` }, 'uninstall holds the controller lease');
      return { previousHolder: undefined };
    }
    const previous = live.spec?.holderIdentity || undefined;
    await kube.replace(kinds.lease, {
      ...live,
      metadata: { ...live.metadata, annotations: { ...(live.metadata.annotations ?? {}), ...mark } },
      spec: { ...live.spec, ...spec, leaseTransitions: (live.spec?.leaseTransitions ?? 0) + 1 },
    });
    log.info(
      { lease: `${ns}/${name}`, previousHolder: previous ?? null },
      'uninstall holds the controller lease',
    );
    return { previousHolder: previous };
  };
  let taken: { previousHolder: string | undefined };
  try {
    // A renewal by the leader in between is a Conflict (or AlreadyExists on create): read again.
    taken = await retryOnConflict(take, { attempts: 10, alsoRetry: isAlreadyExists });
  } catch (err) {
    if (isConflict(err) || isAlreadyExists(err))
      throw new Error(`could not take the controller lease ${ns}/${name}: it kept changing`, { cause: err });
    throw err;
  }
  const previous = taken.previousHolder;
  if (previous && !isUninstallHolder(previous)) {
    // The old leader's term ends at its renew deadline at the latest.
    await (opts.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms))))(opts.renewDeadlineMs + 1_000);
  }
  return taken;
}

/**
 * Gives the Lease up when the uninstall ends: holder cleared (leaseDurationSeconds kept), the
 * mark kept. Old controllers have stood down for good; a new install's controllers (new
 * processes, for which the mark was already there) find no holder and lead at once. Only a Lease
 * this run still holds is touched.
 */
export async function releaseUninstallHold(opts: {
  kube: KubeClient;
  identity: InstallIdentity;
  holder: string;
  log: Logger;
}): Promise<boolean> {
  const { kube, identity, log } = opts;
  const name = `${identity.release}-controller`;
  const ns = identity.operatorNamespace;
  const released = await retryOnConflict(
    async () => {
      const live = await kube.get(kinds.lease, ns, name);
      if (!live || live.spec?.holderIdentity !== opts.holder) return false;
      const now = microTime(Date.now());
      await kube.replace(kinds.lease, {
        ...live,
        spec: { ...live.spec, holderIdentity: '', acquireTime: now, renewTime: now },
      });
      return true;
    },
    { attempts: 10 },
  );
  if (released) log.info({ lease: `${ns}/${name}` }, 'uninstall released the controller lease');
  return released;
}

export type UninstallPolicy = 'delete' | 'retain';

export interface UninstallProgress {
  clock: Clock;
  report(done: number, total: number): void;
}

export interface UninstallReport {
  policy: UninstallPolicy;
  deleted: string[];
  orphaned: string[];
  failed: { service: string; error: string }[];
  deregistered: string[];
}

/**
 * What `helm uninstall`'s pre-delete hook runs. First the controllers stand down (the uninstall
 * takes their Lease), so nothing is re-created or un-marked behind it. `delete`: every Service of this install is
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
  /** The controllers' renew deadline: how long the stand-down waits for the old leader; 10 s. */
  renewDeadlineMs?: number;
  holdSeconds?: number;
  /** Told every 2 s (on `clock`) how many of the Services have been handled while that runs. */
  progress?: UninstallProgress;
}): Promise<UninstallReport> {
  const { kube, identity, log } = opts;
  const holder = uninstallHolder(randomUUID());
  await standDownControllers({
    kube,
    identity,
    holder,
    renewDeadlineMs: opts.renewDeadlineMs ?? 10_000,
    ...(opts.holdSeconds !== undefined ? { holdSeconds: opts.holdSeconds } : {}),
    log,
  });
  try {
    return await applyPolicy(opts);
  } finally {
    // Also after a failure: the old controllers stood down for good either way, and a Lease left
    // held would keep a retry's or a new install's controllers waiting for no one.
    await releaseUninstallHold({ kube, identity, holder, log }).catch((err: unknown) =>
      log.warn(
        { error: err instanceof Error ? err.message : String(err) },
        'uninstall could not release the controller lease',
      ),
    );
  }
}

/**
 * The uninstall policy applied to this install's Services only, while the install lives on: what
 * the chart's post-upgrade hook runs when `bindings.enabled` turns false (the controller then has
 * no Service rights and projects nothing). Unlike `uninstall` it neither takes nor marks the
 * controllers' Lease (they keep running, without bindings) nor deregisters the operator.
 */
export async function cleanUpServices(opts: {
  kube: KubeClient;
  identity: InstallIdentity;
  policy: UninstallPolicy;
  log: Logger;
  now?: () => Date;
  progress?: UninstallProgress;
}): Promise<UninstallReport> {
  return await applyPolicy({ ...opts, api: undefined });
}

async function applyPolicy(opts: {
  kube: KubeClient;
  api: ManagementClient | undefined;
  identity: InstallIdentity;
  policy: UninstallPolicy;
  log: Logger;
  now?: () => Date;
  progress?: UninstallProgress;
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
  // Labels are not ownership outside the operator namespace (docs/projection.md "Ownership").
  const { trusted, unanchored } = anchorOwned(items, identity.operatorNamespace);
  for (const svc of unanchored)
    log.warn(
      { service: keyOf(svc) },
      "service carries this install's labels but no internal Service names it; left alone",
    );
  let handled = 0;
  const handleAll = async (): Promise<void> => {
    for (const svc of trusted) {
      const key = keyOf(svc);
      try {
        if (!isOwnedBy(svc, identity)) continue;
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
      } finally {
        handled++;
      }
    }
  };
  const progress = opts.progress;
  if (progress) {
    await withProgress(
      {
        clock: progress.clock,
        done: () => handled,
        total: trusted.length,
        report: (d, t) => progress.report(d, t),
      },
      handleAll(),
    );
  } else await handleAll();
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

/** The state label of a Service kept by the `retain` policy: no controller keeps it projected. */
export const ORPHANED_STATE = 'orphaned';

async function markOrphaned(kube: KubeClient, svc: Service, stamp: string): Promise<void> {
  await retryOnConflict(
    async (n) => {
      const live = n === 0 ? svc : await kube.get(kinds.service, svc.metadata.namespace, svc.metadata.name);
      if (!live || live.metadata.annotations?.[ORPHANED_ANNOTATION]) return;
      // The state label said `projected`; nobody keeps it so any more.
      const next: Service = {
        ...live,
        metadata: {
          ...live.metadata,
          labels: { ...(live.metadata.labels ?? {}), [STATE_LABEL]: ORPHANED_STATE },
          annotations: { ...(live.metadata.annotations ?? {}), [ORPHANED_ANNOTATION]: stamp },
        },
      };
      try {
        await kube.replace(kinds.service, next);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    },
    { attempts: 5 },
  );
}
