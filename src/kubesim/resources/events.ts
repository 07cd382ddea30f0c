import { isRecord, type KubeObject } from '../types.js';
import { field, type FieldError } from '../validation/field.js';
import { isDNS1123Subdomain } from '../validation/names.js';
import { decodeWith } from './decode.js';
import { coreEventObjectSchema, eventsV1ObjectSchema } from './event-schema.js';
import { META_FIELD_LABELS, type ResourceDef } from './registry.js';

/**
 * Events in both API groups. A real server stores them once and converts between the views;
 * kubesim keeps two separate collections (see docs/kubesim.md), which is enough for a recorder.
 */

const TYPES = ['Normal', 'Warning'];
/** The ObjectReference fields a field selector can name. */
const REFERENCE_FIELDS = ['kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath'];

function str(o: KubeObject, ...path: string[]): string {
  let cur: unknown = o;
  for (const p of path) cur = isRecord(cur) ? cur[p] : undefined;
  return typeof cur === 'string' ? cur : '';
}

const common = {
  version: 'v1',
  kind: 'Event',
  listKind: 'EventList',
  plural: 'events',
  singular: 'event',
  namespaced: true,
  verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
  // pkg/registry/core/event/strategy.go (serves both API groups).
  allowCreateOnUpdate: true,
  allowUnconditionalUpdate: true,
  returnDeletedObject: false,
  tracksGeneration: false,
  nameRule: isDNS1123Subdomain,
} satisfies Partial<ResourceDef>;

export function coreEventResource(): ResourceDef {
  return {
    ...common,
    group: '',
    shortNames: ['ev'],
    verbs: [...common.verbs],
    schema: coreEventObjectSchema,
    decode: (obj) => decodeWith(coreEventObjectSchema, obj, 'Event', 'v1'),
    validate(obj) {
      const errs: FieldError[] = [];
      const ns = str(obj, 'involvedObject', 'namespace');
      if (ns !== '' && ns !== obj.metadata.namespace) {
        errs.push(field.invalid('involvedObject.namespace', ns, 'does not match event.namespace'));
      }
      const type = str(obj, 'type');
      if (type !== '' && !TYPES.includes(type))
        errs.push(field.invalid('type', '', `has invalid value: ${type}`));
      return errs;
    },
    // AddFieldLabelConversionsForEvent and the event strategy's ToSelectableFields.
    fieldLabels: {
      ...META_FIELD_LABELS,
      ...Object.fromEntries(
        REFERENCE_FIELDS.map((f) => [`involvedObject.${f}`, (o: KubeObject) => str(o, 'involvedObject', f)]),
      ),
      reason: (o) => str(o, 'reason'),
      reportingComponent: (o) => str(o, 'reportingComponent'),
      source: (o) => str(o, 'source', 'component') || str(o, 'reportingComponent'),
      type: (o) => str(o, 'type'),
    },
  };
}

export function eventsV1Resource(): ResourceDef {
  return {
    ...common,
    group: 'events.k8s.io',
    shortNames: ['ev'],
    verbs: [...common.verbs],
    schema: eventsV1ObjectSchema,
    decode: (obj) => decodeWith(eventsV1ObjectSchema, obj, 'Event', 'events.k8s.io/v1'),
    validate(obj) {
      // ValidateEventCreate for requests through events.k8s.io/v1.
      const errs: FieldError[] = [];
      if (!str(obj, 'eventTime')) errs.push(field.required('eventTime'));
      const type = str(obj, 'type');
      if (!TYPES.includes(type)) errs.push(field.invalid('type', '', `has invalid value: ${type}`));
      if (!str(obj, 'reportingController')) errs.push(field.required('reportingController'));
      if (!str(obj, 'reportingInstance')) errs.push(field.required('reportingInstance'));
      if (!str(obj, 'action')) errs.push(field.required('action'));
      if (!str(obj, 'reason')) errs.push(field.required('reason'));
      if (str(obj, 'note').length > 1024)
        errs.push(field.invalid('note', '', 'can have at most 1024 characters'));
      const ns = str(obj, 'regarding', 'namespace');
      if (ns !== '' && ns !== obj.metadata.namespace) {
        errs.push(field.invalid('regarding.namespace', ns, 'does not match event.namespace'));
      }
      return errs;
    },
    // The events.k8s.io field label conversion: its names for the same selectable fields (no `source`).
    fieldLabels: {
      ...META_FIELD_LABELS,
      ...Object.fromEntries(
        REFERENCE_FIELDS.map((f) => [`regarding.${f}`, (o: KubeObject) => str(o, 'regarding', f)]),
      ),
      reason: (o) => str(o, 'reason'),
      reportingController: (o) => str(o, 'reportingController'),
      type: (o) => str(o, 'type'),
    },
  };
}
