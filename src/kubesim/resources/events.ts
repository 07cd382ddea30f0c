import { isRecord, type KubeObject } from '../types.js';
import { field, type FieldError } from '../validation/field.js';
import { isDNS1123Subdomain, isQualifiedName } from '../validation/names.js';
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

/** The stored Event's fields under the internal names validation uses, whichever API wrote it. */
interface EventView {
  namespace: string;
  involvedNamespace: string;
  eventTime: string;
  reportingController: string;
  reportingInstance: string;
  action: string;
  reason: string;
  message: string;
}

const coreView = (o: KubeObject): EventView => ({
  namespace: o.metadata.namespace ?? '',
  involvedNamespace: str(o, 'involvedObject', 'namespace'),
  eventTime: str(o, 'eventTime'),
  reportingController: str(o, 'reportingComponent'),
  reportingInstance: str(o, 'reportingInstance'),
  action: str(o, 'action'),
  reason: str(o, 'reason'),
  message: str(o, 'message'),
});

const v1View = (o: KubeObject): EventView => ({
  namespace: o.metadata.namespace ?? '',
  involvedNamespace: str(o, 'regarding', 'namespace'),
  eventTime: str(o, 'eventTime'),
  reportingController: str(o, 'reportingController'),
  reportingInstance: str(o, 'reportingInstance'),
  action: str(o, 'action'),
  reason: str(o, 'reason'),
  message: str(o, 'note'),
});

/**
 * legacyValidateEvent (pkg/apis/core/validation/events.go), run for both APIs: an Event without
 * eventTime only needs its namespace to agree; one with eventTime (a new-style recorder's) needs
 * every reporting field. The field paths are the internal names, but for the reporting controller,
 * which core/v1 calls reportingComponent.
 */
function legacyValidateEvent(e: EventView, controllerField: string): FieldError[] {
  const errs: FieldError[] = [];
  const mismatch = () =>
    field.invalid('involvedObject.namespace', e.involvedNamespace, 'does not match event.namespace');
  if (!e.eventTime) {
    if (
      e.involvedNamespace === ''
        ? e.namespace !== '' && e.namespace !== 'default'
        : e.namespace !== e.involvedNamespace
    )
      errs.push(mismatch());
    return errs;
  }
  if (e.involvedNamespace === '' && e.namespace !== 'default' && e.namespace !== 'kube-system')
    errs.push(mismatch());
  if (!e.reportingController) errs.push(field.required(controllerField));
  for (const msg of isQualifiedName(e.reportingController))
    errs.push(field.invalid(controllerField, e.reportingController, msg));
  if (!e.reportingInstance) errs.push(field.required('reportingInstance'));
  if (e.reportingInstance.length > 128)
    errs.push(field.invalid('reportingInstance', '', 'can have at most 128 characters'));
  if (!e.action) errs.push(field.required('action'));
  if (e.action.length > 128) errs.push(field.invalid('action', '', 'can have at most 128 characters'));
  if (!e.reason) errs.push(field.required('reason'));
  if (e.reason.length > 128) errs.push(field.invalid('reason', '', 'can have at most 128 characters'));
  if (e.message.length > 1024) errs.push(field.invalid('note', '', 'can have at most 1024 characters'));
  return errs;
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
    // Fields without omitempty in k8s.io/api: a real server always writes them, empty or null.
    prepare(obj) {
      obj['source'] ??= {};
      obj['firstTimestamp'] ??= null;
      obj['lastTimestamp'] ??= null;
      obj['eventTime'] ??= null;
      obj['reportingComponent'] ??= '';
      obj['reportingInstance'] ??= '';
    },
    validate(obj) {
      const errs = legacyValidateEvent(coreView(obj), 'reportingComponent');
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
    invalidGroup: '',
    decode: (obj) => decodeWith(eventsV1ObjectSchema, obj, 'Event', 'events.k8s.io/v1'),
    prepare(obj) {
      obj['deprecatedSource'] ??= {};
      obj['deprecatedFirstTimestamp'] ??= null;
      obj['deprecatedLastTimestamp'] ??= null;
    },
    validate(obj) {
      // ValidateEventCreate for requests through events.k8s.io/v1: the legacy rules, then the strict ones.
      const errs = legacyValidateEvent(v1View(obj), 'reportingController');
      if (!str(obj, 'eventTime')) errs.push(field.required('eventTime'));
      const type = str(obj, 'type');
      if (!TYPES.includes(type)) errs.push(field.invalid('type', '', `has invalid value: ${type}`));
      for (const f of ['deprecatedFirstTimestamp', 'deprecatedLastTimestamp'] as const)
        if (str(obj, f))
          errs.push(
            field.invalid(
              f === 'deprecatedFirstTimestamp' ? 'firstTimestamp' : 'lastTimestamp',
              '',
              'needs to be unset',
            ),
          );
      if (typeof obj['deprecatedCount'] === 'number' && obj['deprecatedCount'] !== 0)
        errs.push(field.invalid('count', '', 'needs to be unset'));
      if (str(obj, 'deprecatedSource', 'component') || str(obj, 'deprecatedSource', 'host'))
        errs.push(field.invalid('source', '', 'needs to be unset'));
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
