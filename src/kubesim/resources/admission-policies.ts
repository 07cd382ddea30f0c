import { compilePolicy } from '../admission/compile.js';
import { isRecord, type KubeObject } from '../types.js';
import { field, type FieldError } from '../validation/field.js';
import { validateLabelSelector } from '../validation/label-selector.js';
import {
  isDNS1035Label,
  isDNS1123Subdomain,
  isPathSegmentName,
  isQualifiedName,
} from '../validation/names.js';
import {
  bindingObjectSchema,
  bindingSpecSchema,
  policyObjectSchema,
  policySpecSchema,
  type MatchResources,
  type NamedRuleWithOperations,
} from './admission-schema.js';
import { basicResource } from './basic.js';
import type { ResourceDef } from './registry.js';

/**
 * admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding
 * (pkg/registry/admissionregistration, pkg/apis/admissionregistration/v1 defaults and
 * pkg/apis/admissionregistration/validation): the v1 defaults, every field rule with the real
 * wording, and the policy's CEL expressions compiled at write time. Admission itself is in
 * src/kubesim/admission.
 */

const GROUP = 'admissionregistration.k8s.io';
const OPERATIONS = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
const SCOPES = ['*', 'Cluster', 'Namespaced'];
const REASONS = ['Forbidden', 'Invalid', 'RequestEntityTooLarge'];
const CEL_RESERVED = new Set([
  'true',
  'false',
  'null',
  'in',
  'as',
  'break',
  'const',
  'continue',
  'else',
  'for',
  'function',
  'if',
  'import',
  'let',
  'loop',
  'package',
  'namespace',
  'return',
  'var',
  'void',
  'while',
]);

type Rec = Record<string, unknown>;
const rec = (v: unknown): Rec => (isRecord(v) ? v : {});

/** SetDefaults_MatchResources and SetDefaults_Rule (scope `*`). */
function defaultMatchResources(value: unknown): void {
  if (!isRecord(value)) return;
  value['matchPolicy'] ??= 'Equivalent';
  value['namespaceSelector'] ??= {};
  value['objectSelector'] ??= {};
  for (const list of ['resourceRules', 'excludeResourceRules']) {
    const rules = value[list];
    if (Array.isArray(rules)) for (const r of rules) if (isRecord(r)) r['scope'] ??= '*';
  }
}

const hasWildcard = (list: string[] | undefined) => (list ?? []).includes('*');

/** validateResources (subresources allowed). */
function resourcesErrors(resources: string[] | undefined, path: string): FieldError[] {
  const list = resources ?? [];
  const errs: FieldError[] = [];
  if (list.length === 0) errs.push(field.required(path));
  const wildcardSubs = new Set<string>();
  const wildcardRes = new Set<string>();
  let doubleWildcard = false;
  let singleWildcard = false;
  let withoutSub = false;
  list.forEach((r, i) => {
    if (r === '') {
      errs.push(field.required(`${path}[${i}]`));
      return;
    }
    if (r === '*/*') doubleWildcard = true;
    if (r === '*') singleWildcard = true;
    const slash = r.indexOf('/');
    if (slash < 0) {
      withoutSub = r !== '*';
      return;
    }
    const res = r.slice(0, slash);
    const sub = r.slice(slash + 1);
    if (wildcardSubs.has(res))
      errs.push(field.invalid(`${path}[${i}]`, r, `if '${res}/*' is present, must not specify ${r}`));
    if (wildcardRes.has(sub))
      errs.push(field.invalid(`${path}[${i}]`, r, `if '*/${sub}' is present, must not specify ${r}`));
    if (sub === '*') wildcardSubs.add(res);
    if (res === '*') wildcardRes.add(sub);
  });
  if (list.length > 1 && doubleWildcard)
    errs.push(field.invalid(path, list, "if '*/*' is present, must not specify other resources"));
  if (singleWildcard && withoutSub)
    errs.push(
      field.invalid(path, list, "if '*' is present, must not specify other resources without subresources"),
    );
  return errs;
}

/** validateNamedRuleWithOperations. */
function ruleErrors(r: NamedRuleWithOperations, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  (r.resourceNames ?? []).forEach((n, i) => {
    for (const msg of isPathSegmentName(n)) errs.push(field.invalid(`${path}.resourceNames[${i}]`, n, msg));
    if (seen.has(n)) errs.push(field.duplicate(`${path}.resourceNames[${i}]`, JSON.stringify(n)));
    seen.add(n);
  });
  const ops = r.operations ?? [];
  if (ops.length === 0) errs.push(field.required(`${path}.operations`));
  if (ops.length > 1 && hasWildcard(ops))
    errs.push(
      field.invalid(`${path}.operations`, ops, "if '*' is present, must not specify other operations"),
    );
  ops.forEach((op, i) => {
    if (!OPERATIONS.includes(op)) errs.push(field.notSupported(`${path}.operations[${i}]`, op, OPERATIONS));
  });
  if (!r.apiGroups?.length) errs.push(field.required(`${path}.apiGroups`));
  if ((r.apiGroups?.length ?? 0) > 1 && hasWildcard(r.apiGroups))
    errs.push(
      field.invalid(`${path}.apiGroups`, r.apiGroups, "if '*' is present, must not specify other API groups"),
    );
  if (!r.apiVersions?.length) errs.push(field.required(`${path}.apiVersions`));
  if ((r.apiVersions?.length ?? 0) > 1 && hasWildcard(r.apiVersions))
    errs.push(
      field.invalid(
        `${path}.apiVersions`,
        r.apiVersions,
        "if '*' is present, must not specify other API versions",
      ),
    );
  (r.apiVersions ?? []).forEach((v, i) => {
    if (v === '') errs.push(field.required(`${path}.apiVersions[${i}]`));
  });
  errs.push(...resourcesErrors(r.resources, `${path}.resources`));
  if (r.scope !== undefined && !SCOPES.includes(r.scope))
    errs.push(field.notSupported(`${path}.scope`, r.scope, SCOPES));
  return errs;
}

/** validateMatchResources. */
function matchResourcesErrors(mr: MatchResources | undefined, path: string): FieldError[] {
  if (!mr) return [];
  const errs: FieldError[] = [];
  if (mr.matchPolicy === undefined) errs.push(field.required(`${path}.matchPolicy`));
  else if (!['Equivalent', 'Exact'].includes(mr.matchPolicy))
    errs.push(field.notSupported(`${path}.matchPolicy`, mr.matchPolicy, ['Equivalent', 'Exact']));
  if (!mr.namespaceSelector) errs.push(field.required(`${path}.namespaceSelector`));
  else errs.push(...validateLabelSelector(mr.namespaceSelector, `${path}.namespaceSelector`));
  if (!mr.objectSelector) errs.push(field.required(`${path}.objectSelector`));
  else errs.push(...validateLabelSelector(mr.objectSelector, `${path}.objectSelector`));
  (mr.resourceRules ?? []).forEach((r, i) => errs.push(...ruleErrors(r, `${path}.resourceRules[${i}]`)));
  (mr.excludeResourceRules ?? []).forEach((r, i) =>
    errs.push(...ruleErrors(r, `${path}.excludeResourceRules[${i}]`)),
  );
  return errs;
}

/** validateParamKind. */
function paramKindErrors(
  kind: { apiVersion?: string | undefined; kind?: string | undefined },
  path: string,
): FieldError[] {
  const errs: FieldError[] = [];
  const apiVersion = kind.apiVersion ?? '';
  if (!apiVersion) errs.push(field.required(`${path}.apiVersion`));
  else {
    const slashes = apiVersion.split('/').length - 1;
    if (slashes > 1)
      errs.push(
        field.invalid(`${path}.apiVersion`, apiVersion, `unexpected GroupVersion string: ${apiVersion}`),
      );
    else {
      const [group, version] = slashes === 1 ? apiVersion.split('/') : ['', apiVersion];
      if (group) {
        const msgs = isDNS1123Subdomain(group);
        if (msgs.length) errs.push(field.invalid(`${path}.apiVersion`, group, msgs.join(',')));
      }
      if (!version) errs.push(field.invalid(`${path}.apiVersion`, apiVersion, 'version must be specified'));
      else {
        const msgs = isDNS1035Label(version);
        if (msgs.length) errs.push(field.invalid(`${path}.apiVersion`, version, msgs.join(',')));
      }
    }
  }
  if (!kind.kind) errs.push(field.required(`${path}.kind`));
  else {
    const msgs = isDNS1035Label(kind.kind.toLowerCase());
    if (msgs.length)
      errs.push(
        field.invalid(
          `${path}.kind`,
          kind.kind,
          `may have mixed case, but should otherwise match: ${msgs.join(',')}`,
        ),
      );
  }
  return errs;
}

/** validateValidatingAdmissionPolicySpec, in its order; compile errors come from the one compiler. */
export function policyErrors(obj: KubeObject): FieldError[] {
  const spec = policySpecSchema.catch({}).parse(obj['spec'] ?? {});
  const compiled = compilePolicy(obj.metadata.name, spec).errors;
  const compileError = (path: string) => {
    const e = compiled.get(path);
    return e ? [e] : [];
  };
  const errs: FieldError[] = [];
  if (spec.failurePolicy === undefined) errs.push(field.required('spec.failurePolicy'));
  else if (!['Fail', 'Ignore'].includes(spec.failurePolicy))
    errs.push(field.notSupported('spec.failurePolicy', spec.failurePolicy, ['Fail', 'Ignore']));
  if (spec.paramKind) errs.push(...paramKindErrors(spec.paramKind, 'spec.paramKind'));
  if (!spec.matchConstraints) errs.push(field.required('spec.matchConstraints'));
  else {
    errs.push(...matchResourcesErrors(spec.matchConstraints, 'spec.matchConstraints'));
    if (!spec.matchConstraints.resourceRules?.length)
      errs.push(field.required('spec.matchConstraints.resourceRules'));
  }
  const conditionNames = new Set<string>();
  (spec.matchConditions ?? []).forEach((m, i) => {
    const path = `spec.matchConditions[${i}]`;
    if (!m.expression?.trim()) errs.push(field.required(`${path}.expression`));
    else errs.push(...compileError(`${path}.expression`));
    if (!m.name) errs.push(field.required(`${path}.name`));
    else for (const msg of isQualifiedName(m.name)) errs.push(field.invalid(`${path}.name`, m.name, msg));
    if (m.name) {
      if (conditionNames.has(m.name)) errs.push(field.duplicate(`${path}.name`, JSON.stringify(m.name)));
      conditionNames.add(m.name);
    }
  });
  (spec.variables ?? []).forEach((v, i) => {
    const path = `spec.variables[${i}]`;
    if (!v.name?.trim()) errs.push(field.required(`${path}.name`, 'name is not specified'));
    else if (!/^[_a-zA-Z][_a-zA-Z0-9]*$/.test(v.name) || CEL_RESERVED.has(v.name))
      errs.push(field.invalid(`${path}.name`, v.name, 'name is not a valid CEL identifier'));
    if (!v.expression?.trim()) errs.push(field.required(`${path}.expression`, 'expression is not specified'));
    else errs.push(...compileError(`${path}.expression`));
  });
  if (!spec.validations?.length && !spec.auditAnnotations?.length) {
    const why = 'validations or auditAnnotations must contain at least one item';
    errs.push(field.required('spec.validations', why), field.required('spec.auditAnnotations', why));
  } else {
    (spec.validations ?? []).forEach((v, i) => {
      const path = `spec.validations[${i}]`;
      if (!v.expression?.trim())
        errs.push(field.required(`${path}.expression`, 'expression is not specified'));
      else errs.push(...compileError(`${path}.expression`));
      if (v.messageExpression !== undefined && v.messageExpression !== '' && !v.messageExpression.trim())
        errs.push(
          field.invalid(`${path}.messageExpression`, v.messageExpression, 'must be non-empty if specified'),
        );
      else errs.push(...compileError(`${path}.messageExpression`));
      const message = v.message ?? '';
      if (message.length > 0 && !message.trim())
        errs.push(field.invalid(`${path}.message`, message, 'message must be non-empty if specified'));
      else if (/[\n\r]/.test(message.trim()))
        errs.push(field.invalid(`${path}.message`, message, 'message must not contain line breaks'));
      if (v.reason !== undefined && !REASONS.includes(v.reason))
        errs.push(field.notSupported(`${path}.reason`, v.reason, REASONS));
    });
    const keys = new Set<string>();
    const annotations = spec.auditAnnotations ?? [];
    if (annotations.length > 20)
      errs.push(
        field.invalid('spec.auditAnnotations', annotations, 'must not have more than 20 auditAnnotations'),
      );
    annotations.forEach((a, i) => {
      const path = `spec.auditAnnotations[${i}]`;
      const key = a.key ?? '';
      for (const msg of isQualifiedName(`${obj.metadata.name}/${key}`))
        errs.push(field.invalid(`${path}.key`, `${obj.metadata.name}/${key}`, msg));
      const value = a.valueExpression?.trim() ?? '';
      if (!value) errs.push(field.required(`${path}.valueExpression`, 'valueExpression is not specified'));
      else if (value.length > 5 * 1024)
        errs.push(field.required(`${path}.valueExpression`, 'must not exceed 5120 bytes in length'));
      else errs.push(...compileError(`${path}.valueExpression`));
      if (keys.has(key)) errs.push(field.duplicate(`${path}.key`, JSON.stringify(key)));
      keys.add(key);
    });
  }
  return errs;
}

/** validateValidatingAdmissionPolicyBindingSpec (with the real `matchResouces` typo in its paths). */
export function bindingErrors(obj: KubeObject): FieldError[] {
  const spec = bindingSpecSchema.catch({}).parse(obj['spec'] ?? {});
  const errs: FieldError[] = [];
  if (!spec.policyName) errs.push(field.required('spec.policyName'));
  else
    for (const msg of isDNS1123Subdomain(spec.policyName))
      errs.push(field.invalid('spec.policyName', spec.policyName, msg));
  const ref = spec.paramRef;
  if (ref) {
    if (ref.name) {
      for (const msg of isPathSegmentName(ref.name))
        errs.push(field.invalid('spec.paramRef.name', ref.name, msg));
      if (ref.selector)
        errs.push(field.forbidden('spec.paramRef.name', 'name and selector are mutually exclusive'));
    }
    if (ref.selector) {
      errs.push(...validateLabelSelector(ref.selector, 'spec.paramRef.selector'));
      if (ref.name)
        errs.push(field.forbidden('spec.paramRef.selector', 'name and selector are mutually exclusive'));
    }
    if (!ref.name && !ref.selector)
      errs.push(field.required('spec.paramRef', 'one of name or selector must be specified'));
    if (!ref.parameterNotFoundAction) errs.push(field.required('spec.paramRef.parameterNotFoundAction'));
    else if (!['Deny', 'Allow'].includes(ref.parameterNotFoundAction))
      errs.push(
        field.notSupported('spec.paramRef.parameterNotFoundAction', ref.parameterNotFoundAction, [
          'Deny',
          'Allow',
        ]),
      );
  }
  errs.push(...matchResourcesErrors(spec.matchResources, 'spec.matchResouces'));
  const actions = spec.validationActions ?? [];
  const seen = new Set<string>();
  actions.forEach((a, i) => {
    if (!['Audit', 'Deny', 'Warn'].includes(a))
      errs.push(field.notSupported(`spec.validationActions[${i}]`, a, ['Audit', 'Deny', 'Warn']));
    if (seen.has(a)) errs.push(field.duplicate(`spec.validationActions[${i}]`, JSON.stringify(a)));
    seen.add(a);
  });
  if (seen.has('Deny') && seen.has('Warn'))
    errs.push(
      field.invalid(
        'spec.validationActions',
        actions,
        'must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)',
      ),
    );
  if (seen.size === 0)
    errs.push(field.required('spec.validationActions', 'at least one validation action is required'));
  return errs;
}

/** Generation 1 on create, +1 when the spec changes; status kept from storage (the policies' strategies). */
function keepStatus(obj: KubeObject, old: KubeObject | undefined): void {
  if (old?.['status'] !== undefined) obj['status'] = old['status'];
  else delete obj['status'];
}

export function validatingAdmissionPolicyResource(): ResourceDef {
  return basicResource(
    {
      group: GROUP,
      version: 'v1',
      kind: 'ValidatingAdmissionPolicy',
      plural: 'validatingadmissionpolicies',
      namespaced: false,
    },
    policyObjectSchema,
    {
      categories: ['api-extensions'],
      tracksGeneration: true,
      statusSubresource: true,
      allowUnconditionalUpdate: false,
      prepare(obj, old) {
        keepStatus(obj, old);
        const spec = rec(obj['spec']);
        spec['failurePolicy'] ??= 'Fail';
        defaultMatchResources(spec['matchConstraints']);
        obj['spec'] = spec;
      },
      validate: (obj) => policyErrors(obj),
    },
  );
}

export function validatingAdmissionPolicyBindingResource(): ResourceDef {
  return basicResource(
    {
      group: GROUP,
      version: 'v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      plural: 'validatingadmissionpolicybindings',
      namespaced: false,
    },
    bindingObjectSchema,
    {
      categories: ['api-extensions'],
      tracksGeneration: true,
      allowUnconditionalUpdate: false,
      prepare(obj) {
        const spec = rec(obj['spec']);
        defaultMatchResources(spec['matchResources']);
        obj['spec'] = spec;
      },
      validate: (obj) => bindingErrors(obj),
    },
  );
}
