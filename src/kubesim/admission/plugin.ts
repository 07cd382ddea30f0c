import { bindingSpecSchema, policySpecSchema } from '../resources/admission-schema.js';
import { resourceKey, type Registry, type ResourceDef } from '../resources/registry.js';
import { matchesLabelSelector } from '../selectors.js';
import { errors, type ApiError } from '../status.js';
import { objectKey, type Store } from '../store.js';
import type { KubeObject } from '../types.js';
import type { AdmissionAttributes, ValidatingAdmission } from './attributes.js';
import { compilePolicy, type CompiledPolicy } from './compile.js';
import { dispatch, type Binding, type Denial } from './dispatch.js';

/**
 * The ValidatingAdmissionPolicy admission plugin: reads the stored policies and bindings,
 * compiles each policy once per resourceVersion, dispatches the request, and turns the outcome
 * into the real server's answer (the refusal as a Status, warnings, audit annotations).
 */

/** reasonToCode of the validating dispatcher. */
function codeOf(reason: string): number {
  switch (reason) {
    case 'Forbidden':
      return 403;
    case 'Unauthorized':
      return 401;
    case 'RequestEntityTooLarge':
      return 413;
    default:
      return 422;
  }
}

/** extractResourceName: the request's name, else the object's name or generateName, else `Unknown`. */
function resourceName(a: AdmissionAttributes): string {
  if (a.name) return a.name;
  const meta = a.object?.metadata;
  return meta?.name || meta?.generateName || 'Unknown';
}

/** admission.NewForbidden with the denied decision's reason, code and cause, as the dispatcher builds it. */
export function refusal(a: AdmissionAttributes, d: Denial, warnings: string[]): ApiError {
  const message = d.binding
    ? `ValidatingAdmissionPolicy '${d.policy}' with binding '${d.binding}' denied request: ${d.message}`
    : `ValidatingAdmissionPolicy '${d.policy}' denied request: ${d.message}`;
  const err = errors.forbidden({ group: a.def.group, plural: a.def.plural }, resourceName(a), message, [
    { message },
  ]);
  const reason = d.reason || 'Invalid';
  err.status.reason = reason;
  err.status.code = codeOf(reason);
  if (warnings.length) err.headers['Warning'] = warnings;
  return err;
}

/** `&ParamKind{APIVersion:v1,Kind:ConfigMap,}`: how the real error prints a ParamKind. */
function goParamKind(p: { apiVersion?: string | undefined; kind?: string | undefined }): string {
  return `&ParamKind{APIVersion:${p.apiVersion ?? ''},Kind:${p.kind ?? ''},}`;
}

export class PolicyAdmission implements ValidatingAdmission {
  private readonly compiled = new Map<string, { rv: string; policy: CompiledPolicy }>();

  constructor(
    private readonly store: Store,
    private readonly registry: Registry,
    private readonly defs: { policies: ResourceDef; bindings: ResourceDef; namespaces: ResourceDef },
  ) {}

  validate(attrs: AdmissionAttributes, annotate: (key: string, value: string) => void): string[] {
    const bindings = this.bindings();
    if (bindings.length === 0) return [];
    const outcome = dispatch({
      attrs,
      policies: this.policies(),
      bindings,
      namespaceLabels: (ns) => this.namespace(ns)?.metadata.labels,
      namespaceObject: attrs.namespace ? (this.namespace(attrs.namespace) ?? null) : null,
      params: (policy, binding) => this.params(policy, binding, attrs.namespace),
    });
    for (const [k, v] of outcome.annotations) annotate(k, v);
    if (outcome.denial) throw refusal(attrs, outcome.denial, outcome.warnings);
    return outcome.warnings;
  }

  private namespace(name: string): KubeObject | undefined {
    return this.store.get(resourceKey(this.defs.namespaces), name);
  }

  private bindings(): Binding[] {
    return this.store.list(resourceKey(this.defs.bindings)).map((b) => ({
      name: b.metadata.name,
      spec: bindingSpecSchema.catch({}).parse(b['spec'] ?? {}),
    }));
  }

  private policies(): CompiledPolicy[] {
    const out: CompiledPolicy[] = [];
    const seen = new Set<string>();
    for (const p of this.store.list(resourceKey(this.defs.policies))) {
      const uid = p.metadata.uid ?? p.metadata.name;
      const rv = p.metadata.resourceVersion ?? '';
      seen.add(uid);
      let entry = this.compiled.get(uid);
      if (entry?.rv !== rv) {
        // Stored policies passed validation, so every expression compiles.
        entry = {
          rv,
          policy: compilePolicy(p.metadata.name, policySpecSchema.catch({}).parse(p['spec'] ?? {})).policy,
        };
        this.compiled.set(uid, entry);
      }
      out.push(entry.policy);
    }
    for (const uid of this.compiled.keys()) if (!seen.has(uid)) this.compiled.delete(uid);
    return out;
  }

  /** generic.CollectParams, over the store. */
  private params(
    policy: CompiledPolicy,
    binding: Binding,
    namespace: string,
  ): { params: unknown[] } | { error: string } {
    const kind = policy.spec.paramKind;
    const ref = binding.spec.paramRef;
    if (!kind || !ref) return { params: [null] };
    const [group, version] = (kind.apiVersion ?? '').includes('/')
      ? (kind.apiVersion ?? '').split('/')
      : ['', kind.apiVersion ?? ''];
    const def = this.registry
      .all()
      .find((d) => d.group === group && d.version === version && d.kind === kind.kind && !d.subresource);
    if (!def) return { error: `paramKind kind \`${goParamKind(kind)}\` not known` };
    let paramsNamespace: string | undefined;
    if (def.namespaced) {
      paramsNamespace = ref.namespace || namespace;
      if (!paramsNamespace)
        return {
          error: 'cannot use namespaced paramRef in policy binding that matches cluster-scoped resources',
        };
    } else if (ref.namespace) {
      return { error: 'paramRef.namespace must not be provided for a cluster-scoped `paramKind`' };
    }
    const res = resourceKey(def);
    let params: KubeObject[];
    if (ref.name) {
      const found = this.store.get(
        res,
        objectKey({
          metadata: { name: ref.name, ...(paramsNamespace ? { namespace: paramsNamespace } : {}) },
        }),
      );
      params = found ? [found] : [];
    } else {
      params = this.store
        .list(res, paramsNamespace)
        .filter((o) => matchesLabelSelector(ref.selector, o.metadata.labels));
    }
    if (params.length === 0 && ref.parameterNotFoundAction === 'Deny')
      return { error: 'no params found for policy binding with `Deny` parameterNotFoundAction' };
    return { params };
  }
}
