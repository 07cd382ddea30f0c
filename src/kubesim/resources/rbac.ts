import { field, type FieldError } from '../validation/field.js';
import { isPathSegmentName } from '../validation/names.js';
import { basicResource } from './basic.js';
import { clusterRoleObjectSchema, roleBindingObjectSchema, roleObjectSchema } from './rbac-schema.js';
import type { ResourceDef } from './registry.js';
import type { KubeObject } from '../types.js';

/** rbac.authorization.k8s.io/v1 (pkg/registry/rbac, pkg/apis/rbac/validation). */

const GROUP = 'rbac.authorization.k8s.io';

function ruleErrors(obj: KubeObject, namespaced: boolean): FieldError[] {
  const rules =
    (obj['rules'] as
      | { verbs?: string[]; apiGroups?: string[]; resources?: string[]; nonResourceURLs?: string[] }[]
      | undefined) ?? [];
  const errs: FieldError[] = [];
  rules.forEach((r, i) => {
    if (!r.verbs?.length)
      errs.push(field.required(`rules[${i}].verbs`, 'verbs must contain at least one value'));
    if (r.nonResourceURLs?.length) {
      if (namespaced)
        errs.push(
          field.invalid(
            `rules[${i}].nonResourceURLs`,
            r.nonResourceURLs,
            'namespaced rules cannot apply to non-resource URLs',
          ),
        );
      if (r.apiGroups?.length || r.resources?.length)
        errs.push(
          field.invalid(
            `rules[${i}].nonResourceURLs`,
            r.nonResourceURLs,
            'rules cannot apply to both regular resources and non-resource URLs',
          ),
        );
    } else if (!r.apiGroups?.length || !r.resources?.length) {
      errs.push(field.required(`rules[${i}].apiGroups`, 'resource rules must supply at least one api group'));
    }
  });
  return errs;
}

function bindingErrors(obj: KubeObject, old: KubeObject | undefined, namespaced: boolean): FieldError[] {
  const ref = obj['roleRef'] as { apiGroup?: string; kind?: string; name?: string } | undefined;
  const errs: FieldError[] = [];
  if (!ref?.name) errs.push(field.required('roleRef.name', ''));
  if (ref?.apiGroup !== GROUP)
    errs.push(field.notSupported('roleRef.apiGroup', ref?.apiGroup ?? '', [GROUP]));
  const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  if (!kinds.includes(ref?.kind ?? '')) errs.push(field.notSupported('roleRef.kind', ref?.kind ?? '', kinds));
  if (old && JSON.stringify(old['roleRef']) !== JSON.stringify(obj['roleRef']))
    errs.push(field.invalid('roleRef', obj['roleRef'], 'cannot change roleRef'));
  const subjects =
    (obj['subjects'] as { kind?: string; name?: string; namespace?: string }[] | undefined) ?? [];
  subjects.forEach((s, i) => {
    if (!s.name) errs.push(field.required(`subjects[${i}].name`, ''));
    if (!['ServiceAccount', 'User', 'Group'].includes(s.kind ?? ''))
      errs.push(field.notSupported(`subjects[${i}].kind`, s.kind ?? '', ['ServiceAccount', 'User', 'Group']));
    if (s.kind === 'ServiceAccount' && !namespaced && !s.namespace)
      errs.push(field.required(`subjects[${i}].namespace`, ''));
  });
  return errs;
}

export function roleResource(): ResourceDef {
  return basicResource(
    { group: GROUP, version: 'v1', kind: 'Role', plural: 'roles', namespaced: true },
    roleObjectSchema,
    {
      nameRule: isPathSegmentName,
      validate: (obj) => ruleErrors(obj, true),
    },
  );
}

export function clusterRoleResource(): ResourceDef {
  return basicResource(
    { group: GROUP, version: 'v1', kind: 'ClusterRole', plural: 'clusterroles', namespaced: false },
    clusterRoleObjectSchema,
    { allowCreateOnUpdate: true, nameRule: isPathSegmentName, validate: (obj) => ruleErrors(obj, false) },
  );
}

export function roleBindingResource(): ResourceDef {
  return basicResource(
    { group: GROUP, version: 'v1', kind: 'RoleBinding', plural: 'rolebindings', namespaced: true },
    roleBindingObjectSchema,
    {
      allowCreateOnUpdate: true,
      nameRule: isPathSegmentName,
      validate: (obj, old) => bindingErrors(obj, old, true),
    },
  );
}

export function clusterRoleBindingResource(): ResourceDef {
  return basicResource(
    {
      group: GROUP,
      version: 'v1',
      kind: 'ClusterRoleBinding',
      plural: 'clusterrolebindings',
      namespaced: false,
    },
    roleBindingObjectSchema,
    {
      allowCreateOnUpdate: true,
      nameRule: isPathSegmentName,
      validate: (obj, old) => bindingErrors(obj, old, false),
    },
  );
}
