import type { KubeObject } from '../types.js';
import { field, type FieldError } from '../validation/field.js';
import { isDNS1123Subdomain } from '../validation/names.js';
import { decodeWith } from './decode.js';
import { leaseObjectSchema, leaseSpecFullSchema } from './lease-schema.js';
import type { ResourceDef } from './registry.js';

/** metav1.MicroTime serialises in UTC (the decoder already insisted on six fractional digits). */
function formatMicroTime(s: string): string {
  const iso = new Date(Date.parse(s)).toISOString(); // 2024-01-01T00:00:00.123Z
  const micros = /\.(\d{6})/.exec(s)?.[1] ?? '000000';
  return `${iso.slice(0, 19)}.${micros}Z`;
}

function leaseSpec(obj: KubeObject) {
  return leaseSpecFullSchema.parse(obj.spec ?? {});
}

export function leaseResource(): ResourceDef {
  return {
    group: 'coordination.k8s.io',
    version: 'v1',
    kind: 'Lease',
    listKind: 'LeaseList',
    plural: 'leases',
    singular: 'lease',
    namespaced: true,
    verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
    // pkg/registry/coordination/lease/strategy.go: PUT may create, but every update needs an RV.
    allowCreateOnUpdate: true,
    allowUnconditionalUpdate: false,
    returnDeletedObject: false,
    tracksGeneration: false,
    nameRule: isDNS1123Subdomain,
    schema: leaseObjectSchema,
    decode: (obj) => decodeWith(leaseObjectSchema, obj, 'Lease', 'coordination.k8s.io/v1'),
    prepare(obj) {
      const spec = leaseSpec(obj);
      if (spec.acquireTime) spec.acquireTime = formatMicroTime(spec.acquireTime);
      if (spec.renewTime) spec.renewTime = formatMicroTime(spec.renewTime);
      obj.spec = spec;
    },
    validate(obj) {
      // ValidateLeaseSpec in pkg/apis/coordination/validation.
      const spec = leaseSpec(obj);
      const errs: FieldError[] = [];
      if (spec.leaseDurationSeconds !== undefined && spec.leaseDurationSeconds <= 0) {
        errs.push(
          field.invalid('spec.leaseDurationSeconds', spec.leaseDurationSeconds, 'must be greater than 0'),
        );
      }
      if (spec.leaseTransitions !== undefined && spec.leaseTransitions < 0) {
        errs.push(
          field.invalid('spec.leaseTransitions', spec.leaseTransitions, 'must be greater than or equal to 0'),
        );
      }
      return errs;
    },
  };
}
