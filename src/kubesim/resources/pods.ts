import type { KubeObject } from '../types.js';
import { isRecord } from '../types.js';
import { field, type FieldError } from '../validation/field.js';
import { isDNS1123Label } from '../validation/names.js';
import { basicResource } from './basic.js';
import { podObjectSchema } from './pod-schema.js';
import { META_FIELD_LABELS, type ResourceDef } from './registry.js';

/**
 * core/v1 Pods, served only when kubesim runs process-backed workloads (`podRunner`): the pods
 * registry's strategies (defaults, status owned by the kubelet through `/status`, a spec that is
 * immutable but for images) and its graceful deletion: deleting a pod bound to a node only sets
 * `deletionTimestamp` and `deletionGracePeriodSeconds`; the node agent (workloads/node-agent.ts) stops
 * the process and removes the object when it has exited.
 */

type Rec = Record<string, unknown>;
const rec = (v: unknown): Rec => (isRecord(v) ? v : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'];
const MUTABLE_NOTE =
  'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)';

/** SetDefaults_Probe. */
function defaultProbe(probe: unknown): void {
  if (!isRecord(probe)) return;
  probe['timeoutSeconds'] ??= 1;
  probe['periodSeconds'] ??= 10;
  probe['successThreshold'] ??= 1;
  probe['failureThreshold'] ??= 3;
}

function containerErrors(spec: Rec): FieldError[] {
  const containers = spec['containers'];
  if (!Array.isArray(containers) || containers.length === 0) return [field.required('spec.containers', '')];
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  containers.forEach((c, i) => {
    const name = rec(c)['name'];
    const path = `spec.containers[${i}].name`;
    if (typeof name !== 'string' || name === '') errs.push(field.required(path, ''));
    else if (seen.has(name)) errs.push(field.duplicate(path, JSON.stringify(name)));
    else {
      seen.add(name);
      for (const msg of isDNS1123Label(name)) errs.push(field.invalid(path, name, msg));
    }
  });
  const policy = spec['restartPolicy'];
  if (typeof policy === 'string' && !RESTART_POLICIES.includes(policy))
    errs.push(field.notSupported('spec.restartPolicy', policy, RESTART_POLICIES));
  return errs;
}

/** The spec with what an update may change blanked out (ValidatePodUpdate's mungedPodSpec). */
function immutablePart(spec: unknown): string {
  const s = structuredClone(rec(spec));
  for (const key of ['containers', 'initContainers']) {
    const list = s[key];
    if (Array.isArray(list)) s[key] = list.map((c) => ({ ...rec(c), image: undefined }));
  }
  delete s['activeDeadlineSeconds'];
  delete s['tolerations'];
  return JSON.stringify(s);
}

export function podResource(): ResourceDef {
  return basicResource(
    { group: '', version: 'v1', kind: 'Pod', plural: 'pods', namespaced: true, shortNames: ['po'] },
    podObjectSchema,
    {
      statusSubresource: true,
      returnDeletedObject: true,
      categories: ['all'],
      mergeKeys: {
        'spec.containers': 'name',
        'spec.initContainers': 'name',
        'spec.containers.env': 'name',
        'spec.containers.ports': 'containerPort',
        'spec.volumes': 'name',
        'status.conditions': 'type',
        'status.containerStatuses': 'name',
      },
      fieldLabels: {
        ...META_FIELD_LABELS,
        'spec.nodeName': (o) => str(rec(o['spec'])['nodeName']),
        'spec.restartPolicy': (o) => str(rec(o['spec'])['restartPolicy']),
        'spec.serviceAccountName': (o) => str(rec(o['spec'])['serviceAccountName']),
        'status.phase': (o) => str(rec(o['status'])['phase']),
        'status.podIP': (o) => str(rec(o['status'])['podIP']),
      },
      prepare(obj, old) {
        if (old) {
          // The status belongs to the kubelet (statusView writes it).
          obj['status'] = old['status'];
          return;
        }
        // podStrategy.PrepareForCreate and SetDefaults_PodSpec / SetDefaults_Container.
        obj['status'] = { phase: 'Pending', qosClass: 'BestEffort' };
        const spec = rec(obj['spec']);
        spec['restartPolicy'] ??= 'Always';
        spec['terminationGracePeriodSeconds'] ??= 30;
        spec['dnsPolicy'] ??= 'ClusterFirst';
        spec['schedulerName'] ??= 'default-scheduler';
        spec['enableServiceLinks'] ??= true;
        for (const c of Array.isArray(spec['containers']) ? spec['containers'] : []) {
          const container = rec(c);
          container['terminationMessagePath'] ??= '/dev/termination-log';
          container['terminationMessagePolicy'] ??= 'File';
          container['imagePullPolicy'] ??= 'IfNotPresent';
          defaultProbe(container['readinessProbe']);
          defaultProbe(container['livenessProbe']);
        }
        obj['spec'] = spec;
      },
      validate(obj, old) {
        const errs = containerErrors(rec(obj['spec']));
        if (old && immutablePart(obj['spec']) !== immutablePart(old['spec']))
          errs.push(field.forbidden('spec', MUTABLE_NOTE));
        return errs;
      },
      gracefulDeleteSeconds(obj, requested) {
        const spec = rec(obj['spec']);
        const phase = rec(obj['status'])['phase'];
        // podStrategy.CheckGracefulDelete: an unscheduled or finished pod goes at once.
        if (!spec['nodeName'] || phase === 'Succeeded' || phase === 'Failed') return 0;
        if (requested !== undefined && requested >= 0) return requested;
        const own = spec['terminationGracePeriodSeconds'];
        return typeof own === 'number' && own >= 0 ? own : 30;
      },
    },
  );
}

/** A pod's view of itself while the kubelet runs it. */
export function isTerminating(pod: KubeObject): boolean {
  return pod.metadata.deletionTimestamp !== undefined;
}
