import type { BindingSpec } from '../resources/admission-schema.js';
import type { KubeObject } from '../types.js';
import type { AdmissionAttributes } from './attributes.js';
import type { CompiledPolicy } from './compile.js';
import { isExemptFromPolicies, matchesResources, type NamespaceLabels } from './match.js';
import { validatePolicy, type PolicyDecision } from './validate.js';

/**
 * The ValidatingAdmissionPolicy dispatcher, pure: which policy × binding × param applies to a
 * request, and what their decisions add up to under each binding's validationActions (Deny
 * refuses, Warn warns, Audit annotates the audit record), with configuration errors (params not
 * found) under the policy's failurePolicy.
 */

export interface Binding {
  name: string;
  spec: BindingSpec;
}

/** The params a binding selects for a policy, or why there are none (a configuration error). */
export type ParamLookup = (
  policy: CompiledPolicy,
  binding: Binding,
) => { params: unknown[] } | { error: string };

export interface DispatchInput {
  attrs: AdmissionAttributes;
  policies: readonly CompiledPolicy[];
  bindings: readonly Binding[];
  namespaceLabels: NamespaceLabels;
  namespaceObject: KubeObject | null;
  params: ParamLookup;
}

export interface Denial {
  policy: string;
  binding: string | undefined;
  message: string;
  /** A StatusReason; '' means Invalid. */
  reason: string;
}

export interface DispatchOutcome {
  /** The first denied decision: the request is refused with it. */
  denial?: Denial;
  warnings: string[];
  /** Audit annotations in the order they were added; an existing key is never overwritten. */
  annotations: [string, string][];
}

const VALIDATION_FAILURE = 'validation.policy.admission.k8s.io/validation_failure';

/** CreateAdmissionRequest as the `request` variable shows it: empty optional fields are absent. */
export function admissionRequest(a: AdmissionAttributes): Record<string, unknown> {
  const kind = { group: a.def.group, version: a.def.version, kind: a.def.kind };
  const resource = { group: a.def.group, version: a.def.version, resource: a.def.plural };
  const user = a.user;
  return {
    kind,
    resource,
    ...(a.subresource ? { subResource: a.subresource } : {}),
    requestKind: kind,
    requestResource: resource,
    ...(a.subresource ? { requestSubResource: a.subresource } : {}),
    ...(a.name ? { name: a.name } : {}),
    ...(a.namespace ? { namespace: a.namespace } : {}),
    operation: a.operation,
    userInfo: {
      ...(user.user ? { username: user.user } : {}),
      ...(user.uid ? { uid: user.uid } : {}),
      ...(user.groups.length ? { groups: user.groups } : {}),
      ...(user.extra && Object.keys(user.extra).length ? { extra: user.extra } : {}),
    },
    dryRun: a.dryRun,
    options: a.options,
  };
}

/** CreateNamespaceObject: the metadata fields, spec and status a policy may read. */
export function namespaceView(ns: KubeObject | null): Record<string, unknown> | null {
  if (!ns) return null;
  const m = ns.metadata;
  const keep = [
    'name',
    'generateName',
    'namespace',
    'uid',
    'resourceVersion',
    'generation',
    'creationTimestamp',
    'deletionTimestamp',
    'deletionGracePeriodSeconds',
    'labels',
    'annotations',
    'finalizers',
  ];
  const metadata = Object.fromEntries(keep.filter((k) => m[k] !== undefined).map((k) => [k, m[k]]));
  return {
    metadata,
    ...(ns['spec'] !== undefined ? { spec: ns['spec'] } : {}),
    ...(ns['status'] !== undefined ? { status: ns['status'] } : {}),
  };
}

export function dispatch(input: DispatchInput): DispatchOutcome {
  const { attrs } = input;
  const out: DispatchOutcome = { warnings: [], annotations: [] };
  if (isExemptFromPolicies(attrs)) return out;
  const annotate = (key: string, value: string) => {
    if (!out.annotations.some(([k]) => k === key)) out.annotations.push([key, value]);
  };
  const deny = (d: Denial) => {
    out.denial ??= d;
  };
  const request = admissionRequest(attrs);
  // The Namespace object itself has no namespaceObject (the dispatcher's special case).
  const namespaceObject =
    attrs.def.kind === 'Namespace' && attrs.def.group === '' ? null : namespaceView(input.namespaceObject);

  for (const policy of input.policies) {
    const constraints = policy.spec.matchConstraints;
    if (!constraints || !matchesResources(constraints, attrs, input.namespaceLabels)) continue;
    const published = new Map<string, string[]>();
    for (const binding of input.bindings) {
      if (binding.spec.policyName !== policy.name) continue;
      const mr = binding.spec.matchResources;
      if (mr && !matchesResources(mr, attrs, input.namespaceLabels)) continue;
      const found = input.params(policy, binding);
      if ('error' in found) {
        if (policy.failurePolicy !== 'Ignore')
          deny({
            policy: policy.name,
            binding: binding.name,
            reason: '',
            message: `failed to configure binding: ${found.error}`,
          });
        continue;
      }
      const actions = binding.spec.validationActions ?? [];
      for (const params of found.params) {
        const result = validatePolicy(policy, {
          object: attrs.object,
          oldObject: attrs.oldObject,
          request,
          namespaceObject,
          params,
        });
        result.decisions.forEach((d: PolicyDecision, i) => {
          if (d.action !== 'deny') return;
          for (const action of actions) {
            if (action === 'Deny')
              deny({ policy: policy.name, binding: binding.name, reason: d.reason, message: d.message });
            else if (action === 'Warn')
              out.warnings.push(
                `Validation failed for ValidatingAdmissionPolicy '${policy.name}' with binding '${binding.name}': ${d.message}`,
              );
            else if (action === 'Audit')
              annotate(
                VALIDATION_FAILURE,
                JSON.stringify([
                  {
                    message: d.message,
                    policy: binding.spec.policyName,
                    binding: binding.name,
                    expressionIndex: i,
                    validationActions: actions,
                  },
                ]),
              );
          }
        });
        for (const a of result.auditAnnotations) {
          if (a.error !== undefined)
            deny({ policy: policy.name, binding: binding.name, reason: '', message: a.error });
          else if (a.value !== undefined) {
            const values = published.get(a.key) ?? [];
            if (!values.includes(a.value)) published.set(a.key, [...values, a.value.slice(0, 10 * 1024)]);
          }
        }
      }
    }
    for (const [key, values] of published) annotate(`${policy.name}/${key}`, values.join(', '));
  }
  return out;
}
