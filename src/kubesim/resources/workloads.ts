import type { KubeObject } from '../types.js';
import { isRecord } from '../types.js';
import { field, type FieldError } from '../validation/field.js';
import { basicResource } from './basic.js';
import type { ResourceDef } from './registry.js';
import {
  deploymentObjectSchema,
  jobObjectSchema,
  networkPolicyObjectSchema,
  pdbObjectSchema,
} from './workload-schema.js';

/**
 * Deployments, Jobs, PodDisruptionBudgets and NetworkPolicies: stored with their registry
 * strategies (defaults, generation, status owned by the status subresource), but no controller
 * acts on them: no ReplicaSets or Pods appear, a Job never runs. A test plays the controller and
 * writes status through `/status`.
 */

const CONTAINER_MERGE_KEYS = {
  'spec.template.spec.containers': 'name',
  'spec.template.spec.initContainers': 'name',
  'spec.template.spec.containers.env': 'name',
  'spec.template.spec.containers.ports': 'containerPort',
  'spec.template.spec.containers.volumeMounts': 'mountPath',
  'spec.template.spec.volumes': 'name',
};

type Rec = Record<string, unknown>;
const rec = (v: unknown): Rec => (isRecord(v) ? v : {});

/** The status belongs to the controller: a spec write keeps the stored one, a create starts empty. */
function keepStatus(obj: KubeObject, old: KubeObject | undefined): void {
  if (old?.['status'] !== undefined) obj['status'] = old['status'];
  else delete obj['status'];
}

/** ValidatePodTemplateSpecForReplicaSet / the Job variant: selector present and matching the template. */
function selectorErrors(obj: KubeObject): FieldError[] {
  const spec = rec(obj['spec']);
  const selector = rec(spec['selector']);
  const labels = rec(rec(rec(spec['template'])['metadata'])['labels']);
  const errs: FieldError[] = [];
  const matchLabels = rec(selector['matchLabels']);
  if (!spec['selector'] || (Object.keys(matchLabels).length === 0 && !selector['matchExpressions'])) {
    errs.push(field.required('spec.selector', ''));
    return errs;
  }
  for (const [k, v] of Object.entries(matchLabels)) {
    if (labels[k] !== v) {
      errs.push(
        field.invalid('spec.template.metadata.labels', labels, '`selector` does not match template `labels`'),
      );
      break;
    }
  }
  return errs;
}

function containersErrors(obj: KubeObject, restartPolicies: string[]): FieldError[] {
  const podSpec = rec(rec(rec(obj['spec'])['template'])['spec']);
  const containers = podSpec['containers'];
  const errs: FieldError[] = [];
  if (!Array.isArray(containers) || containers.length === 0)
    errs.push(field.required('spec.template.spec.containers', ''));
  const policy = podSpec['restartPolicy'];
  if (typeof policy === 'string' && !restartPolicies.includes(policy))
    errs.push(field.notSupported('spec.template.spec.restartPolicy', policy, restartPolicies));
  return errs;
}

/** `spec.<key>` may not change on update (Deployment selectors, Job templates). */
function immutableSpecField(obj: KubeObject, old: KubeObject | undefined, key: string): FieldError[] {
  if (!old) return [];
  const now = rec(obj['spec'])[key];
  return JSON.stringify(rec(old['spec'])[key]) === JSON.stringify(now)
    ? []
    : [field.invalid(`spec.${key}`, now, 'field is immutable')];
}

export function deploymentResource(): ResourceDef {
  return basicResource(
    {
      group: 'apps',
      version: 'v1',
      kind: 'Deployment',
      plural: 'deployments',
      namespaced: true,
      shortNames: ['deploy'],
    },
    deploymentObjectSchema,
    {
      tracksGeneration: true,
      statusSubresource: true,
      categories: ['all'],
      mergeKeys: CONTAINER_MERGE_KEYS,
      prepare(obj, old) {
        keepStatus(obj, old);
        // SetDefaults_Deployment (apps/v1).
        const spec = rec(obj['spec']);
        spec['replicas'] ??= 1;
        const strategy = rec(spec['strategy']);
        strategy['type'] ??= 'RollingUpdate';
        if (strategy['type'] === 'RollingUpdate') {
          const ru = rec(strategy['rollingUpdate']);
          ru['maxUnavailable'] ??= '25%';
          ru['maxSurge'] ??= '25%';
          strategy['rollingUpdate'] = ru;
        }
        spec['strategy'] = strategy;
        spec['revisionHistoryLimit'] ??= 10;
        spec['progressDeadlineSeconds'] ??= 600;
        const podSpec = rec(rec(spec['template'])['spec']);
        podSpec['restartPolicy'] ??= 'Always';
        obj['spec'] = spec;
      },
      validate(obj, old) {
        return [
          ...selectorErrors(obj),
          ...containersErrors(obj, ['Always']),
          ...immutableSpecField(obj, old, 'selector'),
        ];
      },
    },
  );
}

export function jobResource(): ResourceDef {
  return basicResource(
    { group: 'batch', version: 'v1', kind: 'Job', plural: 'jobs', namespaced: true },
    jobObjectSchema,
    {
      tracksGeneration: true,
      statusSubresource: true,
      categories: ['all'],
      mergeKeys: CONTAINER_MERGE_KEYS,
      prepare(obj, old) {
        keepStatus(obj, old);
        const spec = rec(obj['spec']);
        if (!old) {
          // jobStrategy.PrepareForCreate + defaults: the server-generated selector on the Job's uid.
          const uid = obj.metadata.uid ?? '';
          if (spec['manualSelector'] !== true) {
            const template = rec(spec['template']);
            const meta = rec(template['metadata']);
            const generated = {
              'batch.kubernetes.io/controller-uid': uid,
              'batch.kubernetes.io/job-name': obj.metadata.name,
            };
            meta['labels'] = {
              ...rec(meta['labels']),
              ...generated,
              'controller-uid': uid,
              'job-name': obj.metadata.name,
            };
            template['metadata'] = meta;
            spec['template'] = template;
            spec['selector'] = { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } };
          }
          spec['completions'] ??= 1;
          spec['parallelism'] ??= 1;
          spec['backoffLimit'] ??= 6;
          spec['completionMode'] ??= 'NonIndexed';
          spec['suspend'] ??= false;
          spec['podReplacementPolicy'] ??= 'TerminatingOrFailed';
        }
        obj['spec'] = spec;
      },
      validate(obj, old) {
        const errs = containersErrors(obj, ['OnFailure', 'Never']);
        if (!rec(rec(rec(obj['spec'])['template'])['spec'])['restartPolicy'])
          errs.push(field.required('spec.template.spec.restartPolicy', ''));
        return [...errs, ...immutableSpecField(obj, old, 'template')];
      },
    },
  );
}

export function podDisruptionBudgetResource(): ResourceDef {
  return basicResource(
    {
      group: 'policy',
      version: 'v1',
      kind: 'PodDisruptionBudget',
      plural: 'poddisruptionbudgets',
      namespaced: true,
      shortNames: ['pdb'],
    },
    pdbObjectSchema,
    {
      tracksGeneration: true,
      statusSubresource: true,
      prepare: keepStatus,
      validate(obj) {
        const spec = rec(obj['spec']);
        if (spec['minAvailable'] !== undefined && spec['maxUnavailable'] !== undefined)
          return [field.invalid('spec', spec, 'minAvailable and maxUnavailable cannot be both set')];
        return [];
      },
    },
  );
}

export function networkPolicyResource(): ResourceDef {
  return basicResource(
    {
      group: 'networking.k8s.io',
      version: 'v1',
      kind: 'NetworkPolicy',
      plural: 'networkpolicies',
      namespaced: true,
      shortNames: ['netpol'],
    },
    networkPolicyObjectSchema,
    {
      tracksGeneration: true,
      prepare(obj) {
        const spec = rec(obj['spec']);
        spec['podSelector'] ??= {};
        if (!spec['policyTypes']) spec['policyTypes'] = spec['egress'] ? ['Ingress', 'Egress'] : ['Ingress'];
        obj['spec'] = spec;
      },
    },
  );
}
