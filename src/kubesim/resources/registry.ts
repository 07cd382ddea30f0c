import type { z } from 'zod';
import type { KubeObject, Verb } from '../types.js';
import type { MergeKeys } from '../strategic-merge.js';
import type { FieldError } from '../validation/field.js';

/**
 * Everything the generic storage and handler layer needs to know about one resource. Adding a
 * resource (a CRD, say) means writing one of these and registering it; no handler changes.
 */
export interface ResourceDef {
  group: string;
  version: string;
  kind: string;
  listKind: string;
  plural: string;
  singular: string;
  shortNames?: string[];
  namespaced: boolean;
  /** Verbs served (and advertised in discovery). */
  verbs: Verb[];
  /** strategy.AllowCreateOnUpdate(): PUT on a missing object creates it. */
  allowCreateOnUpdate: boolean;
  /** strategy.AllowUnconditionalUpdate(): PUT without metadata.resourceVersion is accepted. */
  allowUnconditionalUpdate: boolean;
  /** Delete answers with the deleted object instead of a success Status. */
  returnDeletedObject: boolean;
  /** metadata.generation starts at 1 and is bumped when `spec` changes. */
  tracksGeneration: boolean;
  /**
   * Every field a real object of this kind can have (a `*-schema.ts` file): the one place that
   * knows the kind's fields, for unknown-field detection (fieldValidation), the structural decode
   * and the OpenAPI documents.
   */
  schema: z.ZodType;
  /** The rule for metadata.name (DNS-1035 label, DNS-1123 subdomain, ...). */
  nameRule: (name: string) => string[];
  /**
   * Structural decode of a request body: wrong JSON types are a 400 BadRequest on a real server
   * (the Go decoder fails), semantic errors come later as 422. Returns a decode error text.
   */
  decode?: (obj: KubeObject) => string | undefined;
  /** Defaulting and strategy.PrepareForCreate/PrepareForUpdate (old is set on update). */
  prepare?: (obj: KubeObject, old: KubeObject | undefined) => void;
  /**
   * The API group a 422 names, when it is the internal one rather than the served one
   * (events.k8s.io Events validate as the core Event: `Event "x" is invalid`). Default: `group`.
   */
  invalidGroup?: string;
  /** Validation (create rules, plus update rules when old is set). */
  validate?: (obj: KubeObject, old: KubeObject | undefined) => FieldError[];
  /** Storage-side allocations just before the write (ClusterIPs); may throw an ApiError. */
  beforeCommit?: (obj: KubeObject, old: KubeObject | undefined) => void;
  /** Releases what the old object held and the new one no longer does (after an update). */
  afterUpdate?: (obj: KubeObject, old: KubeObject) => void;
  /** Releases whatever the object held (after a delete, including namespace cascades). */
  afterDelete?: (obj: KubeObject) => void;
  /**
   * rest.RESTGracefulDeleteStrategy: the grace period of a delete (the request's
   * gracePeriodSeconds, if any, is passed). Above 0 the delete only marks the object terminating
   * (deletionTimestamp, deletionGracePeriodSeconds) and whoever runs it removes it later (pods and
   * the kubelet); 0 or undefined removes it at once.
   */
  gracefulDeleteSeconds?: (obj: KubeObject, requested: number | undefined) => number;
  /** Strategic-merge-patch merge keys of the kind's lists (beyond ObjectMeta's); see strategic-merge.ts. */
  mergeKeys?: MergeKeys;
  /**
   * Serves the `status` subresource (get, update, patch): writes there change only `.status`, and
   * `prepare` is expected to keep the stored status on main-resource writes.
   */
  statusSubresource?: boolean;
  /** Set on the view of a kind through a subresource (statusView): the subresource's name. */
  subresource?: 'status';
  /**
   * The kind's own field label conversion (AddFieldLabelConversionFunc in
   * pkg/apis/<group>/<version>/conversion.go): every field selector label it accepts, with the
   * value an object has for it; any other label is `field label not supported: <label>`.
   * Undefined: the default conversion, `metadata.name` and `metadata.namespace` only.
   */
  fieldLabels?: Record<string, (obj: KubeObject) => string>;
  /**
   * A create-only kind that is never stored (the self reviews): a create is answered from the
   * request's identity by reviews.ts.
   */
  review?: boolean;
  /** Discovery categories (`all` for the kinds `kubectl get all` lists). */
  categories?: string[];
}

/** The field labels every kind's conversion accepts unless it says otherwise: ObjectMeta's. */
export const META_FIELD_LABELS: Readonly<Record<string, (obj: KubeObject) => string>> = {
  'metadata.name': (o) => o.metadata.name,
  'metadata.namespace': (o) => o.metadata.namespace ?? '',
};

export function apiVersionOf(def: Pick<ResourceDef, 'group' | 'version'>): string {
  return def.group ? `${def.group}/${def.version}` : def.version;
}

/** Storage key of a resource type: unique across groups. */
export function resourceKey(def: Pick<ResourceDef, 'group' | 'plural'>): string {
  return `${def.group}/${def.plural}`;
}

export class Registry {
  private readonly defs: ResourceDef[] = [];

  add(def: ResourceDef): void {
    this.defs.push(def);
  }

  all(): readonly ResourceDef[] {
    return this.defs;
  }

  find(group: string, version: string, plural: string): ResourceDef | undefined {
    return this.defs.find((d) => d.group === group && d.version === version && d.plural === plural);
  }

  /** Group/version pairs served, in registration order, core first. */
  groupVersions(): { group: string; version: string }[] {
    const seen = new Set<string>();
    const out: { group: string; version: string }[] = [];
    for (const d of this.defs) {
      const k = `${d.group}/${d.version}`;
      if (!seen.has(k)) {
        seen.add(k);
        out.push({ group: d.group, version: d.version });
      }
    }
    return out;
  }
}

/**
 * The view of a kind through its `status` subresource: a write takes only `.status` from the
 * body, everything else (spec, labels, annotations) from the stored object, as the registries'
 * statusStrategy.PrepareForUpdate does.
 */
export function statusView(def: ResourceDef): ResourceDef {
  return {
    ...def,
    subresource: 'status',
    prepare(obj, old) {
      if (!old) return;
      const status = obj['status'];
      for (const k of Object.keys(obj)) if (k !== 'metadata') delete obj[k];
      for (const [k, v] of Object.entries(old))
        if (k !== 'metadata' && k !== 'status') obj[k] = structuredClone(v);
      if (status !== undefined) obj['status'] = status;
      obj.metadata.labels = old.metadata.labels;
      obj.metadata.annotations = old.metadata.annotations;
    },
  };
}
