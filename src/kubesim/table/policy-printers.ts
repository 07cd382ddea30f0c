import { z } from 'zod';
import type { KubeObject } from '../types.js';
import { ageCol, col, nameCol, optStr, view, type Printer } from './columns.js';
import { since } from './duration.js';

/**
 * The ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding printers
 * (printValidatingAdmissionPolicy, printValidatingAdmissionPolicyBinding).
 */

const policyView = z.looseObject({
  spec: z
    .looseObject({
      validations: z.array(z.unknown()).optional().catch(undefined),
      paramKind: z.looseObject({ apiVersion: optStr, kind: optStr }).optional().catch(undefined),
    })
    .optional()
    .catch(undefined),
});

const policyPrinter: Printer = {
  columns: [
    nameCol(),
    col('Validations', 'Validation Rules count', { type: 'integer' }),
    col('ParamKind', 'The kind of parameter resource'),
    ageCol(),
  ],
  cells(obj: KubeObject, now: number) {
    const p = view(policyView, obj);
    const kind = p?.spec?.paramKind;
    return [
      obj.metadata.name,
      p?.spec?.validations?.length ?? 0,
      kind ? `${kind.apiVersion ?? ''}/${kind.kind ?? ''}` : '<unset>',
      since(obj.metadata.creationTimestamp, now),
    ];
  },
};

const requirement = z.looseObject({
  key: z.string(),
  operator: z.string(),
  values: z.array(z.string()).optional(),
});
const bindingView = z.looseObject({
  spec: z
    .looseObject({
      policyName: optStr,
      paramRef: z
        .looseObject({
          name: optStr,
          namespace: optStr,
          selector: z
            .looseObject({
              matchLabels: z.record(z.string(), z.string()).optional(),
              matchExpressions: z.array(requirement).optional(),
            })
            .optional(),
        })
        .optional()
        .catch(undefined),
    })
    .optional()
    .catch(undefined),
});

/** The gogo-protobuf String() of a metav1.LabelSelector, which this printer shows as is. */
function goSelectorString(s: {
  matchLabels?: Record<string, string> | undefined;
  matchExpressions?: z.infer<typeof requirement>[] | undefined;
}): string {
  const labels = Object.keys(s.matchLabels ?? {})
    .sort()
    .map((k) => `${k}: ${s.matchLabels?.[k] ?? ''},`)
    .join('');
  const exprs = (s.matchExpressions ?? [])
    .map(
      (e) =>
        `LabelSelectorRequirement{Key:${e.key},Operator:${e.operator},Values:[${(e.values ?? []).join(' ')}],},`,
    )
    .join('');
  return `&LabelSelector{MatchLabels:map[string]string{${labels}},MatchExpressions:[]LabelSelectorRequirement{${exprs}},}`;
}

const bindingPrinter: Printer = {
  columns: [nameCol(), col('PolicyName', 'Policy Name'), col('ParamRef', 'Param Ref'), ageCol()],
  cells(obj: KubeObject, now: number) {
    const b = view(bindingView, obj);
    const ref = b?.spec?.paramRef;
    let param = '<unset>';
    if (ref?.name) param = `${ref.namespace || '*'}/${ref.name}`;
    else if (ref?.selector) param = goSelectorString(ref.selector);
    return [obj.metadata.name, b?.spec?.policyName ?? '', param, since(obj.metadata.creationTimestamp, now)];
  },
};

export const POLICY_PRINTERS: Record<string, Printer> = {
  'admissionregistration.k8s.io/ValidatingAdmissionPolicy': policyPrinter,
  'admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding': bindingPrinter,
};
