import { isRecord } from '../types.js';
import { isDNS1123Label } from '../validation/names.js';
import { decodeWith } from './decode.js';
import { namespaceObjectSchema } from './namespace-schema.js';
import type { ResourceDef } from './registry.js';

/** The label every namespace carries since 1.21 (NamespaceDefaultLabelName), kept in sync with the name. */
const NAME_LABEL = 'kubernetes.io/metadata.name';

export function namespaceResource(): ResourceDef {
  return {
    group: '',
    version: 'v1',
    kind: 'Namespace',
    listKind: 'NamespaceList',
    plural: 'namespaces',
    singular: 'namespace',
    shortNames: ['ns'],
    namespaced: false,
    verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
    // pkg/registry/core/namespace/strategy.go.
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: true,
    returnDeletedObject: true,
    tracksGeneration: false,
    nameRule: isDNS1123Label,
    schema: namespaceObjectSchema,
    decode: (obj) => decodeWith(namespaceObjectSchema, obj, 'Namespace', 'v1'),
    prepare(obj, old) {
      obj.metadata.labels = { ...(obj.metadata.labels ?? {}), [NAME_LABEL]: obj.metadata.name };
      if (old) {
        // Phase and finalizers belong to the namespace lifecycle, not to spec writers.
        obj.spec = old.spec;
        obj.status = old.status;
      } else {
        obj.spec = { finalizers: ['kubernetes'] };
        obj.status = { phase: 'Active' };
      }
    },
    // AddFieldLabelConversionsForNamespace: no metadata.namespace.
    fieldLabels: {
      'metadata.name': (o) => o.metadata.name,
      'status.phase': (o) => (isRecord(o.status) && typeof o.status.phase === 'string' ? o.status.phase : ''),
    },
  };
}
