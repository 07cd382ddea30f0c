import { canonical } from './canonical.js';
import { randomInt, randomUUID } from 'node:crypto';
import type { AdmissionOperation, ValidatingAdmission, WriteContext } from './admission/attributes.js';
import { parse as parseYaml } from 'yaml';
import { buildFilter } from './filter.js';
import { checkPreconditions, type NamespaceLifecycle } from './lifecycle.js';
import { listObjects } from './list.js';
import { jsonPatch, jsonPatchDecodeError, mergePatch, PATCH_TYPES, PatchError } from './patch.js';
import { METADATA_MERGE_KEYS, StrategicMergeError, strategicMerge } from './strategic-merge.js';
import type { ResourceDef } from './resources/registry.js';
import { apiVersionOf, resourceKey } from './resources/registry.js';
import { deleteOptionsSchema, objectEnvelopeSchema, type ListQuery, type WriteQuery } from './schemas.js';
import { errors, successStatus } from './status.js';
import { objectKey, type Store } from './store.js';
import { isRecord, stripNulls, type Json, type KubeObject } from './types.js';
import { field, invalidError } from './validation/field.js';
import { findDuplicateKeys } from './validation/duplicate-fields.js';
import {
  fieldValidationOf,
  goFormat,
  strictError,
  strictMessages,
  type FieldCheck,
  type FieldValidation,
} from './validation/field-validation.js';
import { validateObjectMeta } from './validation/meta.js';
import { pruneUnknownFields } from './validation/unknown-fields.js';

/**
 * The generic REST handlers (genericregistry.Store): create, get, list, update, patch, delete
 * for any registered resource, with the apiserver's order of checks: decode (400), validation
 * (422), admission (404/403), storage preconditions (409), then the write.
 */

export interface Reply {
  status: number;
  body: unknown;
  /** Texts for `Warning` headers (fieldValidation=Warn). */
  warnings?: string[];
  /** Extra response headers (a Table's Content-Type). */
  headers?: Record<string, string>;
}

/** A request body as the server front read it. */
export interface RequestBody {
  value: unknown;
  /** Duplicate keys in the raw JSON (JSON.parse kept the last one). */
  duplicates: string[];
}

const OPTIMISTIC_LOCK =
  'the object has been modified; please apply your changes to the latest version and try again';

/** names.SimpleNameGenerator: five characters from an alphabet without vowels and confusables. */
function randomSuffix(): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  let s = '';
  for (let i = 0; i < 5; i++) s += alphabet.charAt(randomInt(alphabet.length));
  return s;
}

const META_ORDER = [
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
  'ownerReferences',
  'finalizers',
];

/** Builds the stored shape: kind, apiVersion, metadata (in the apiserver's field order), rest. */
/** ObjectMeta's maps and lists are `omitempty`: an empty one is not stored or served. */
const OMIT_WHEN_EMPTY = new Set(['labels', 'annotations', 'finalizers', 'ownerReferences']);
const isEmpty = (v: unknown) =>
  Array.isArray(v) ? v.length === 0 : isRecord(v) && Object.keys(v).length === 0;

function shape(def: ResourceDef, meta: KubeObject['metadata'], rest: Record<string, unknown>): KubeObject {
  const ordered: Record<string, unknown> = {};
  const keep = (k: string, v: unknown) => v !== undefined && !(OMIT_WHEN_EMPTY.has(k) && isEmpty(v));
  for (const k of META_ORDER) if (keep(k, meta[k])) ordered[k] = meta[k];
  for (const [k, v] of Object.entries(meta)) if (!(k in ordered) && keep(k, v)) ordered[k] = v;
  const { kind: _k, apiVersion: _a, metadata: _m, ...body } = rest;
  return {
    kind: def.kind,
    apiVersion: apiVersionOf(def),
    metadata: { ...ordered, name: meta.name },
    ...body,
  };
}

/** The options object of a write as `request.options` shows it to admission. */
function writeOptions(kind: 'CreateOptions' | 'UpdateOptions', q: WriteQuery): Record<string, unknown> {
  return {
    kind,
    apiVersion: 'meta.k8s.io/v1',
    ...(q.dryRun ? { dryRun: [q.dryRun] } : {}),
    ...(q.fieldManager ? { fieldManager: q.fieldManager } : {}),
  };
}

function nowSeconds(ms = Date.now()): string {
  return new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
}

export class ResourceHandlers {
  constructor(
    private readonly store: Store,
    private readonly lifecycle: NamespaceLifecycle,
    private readonly namespaces: ResourceDef,
    /** Validating admission (policies); writes without a context (kubesim's own) skip it. */
    private readonly admission?: ValidatingAdmission,
  ) {}

  get(def: ResourceDef, ns: string | undefined, name: string): Reply {
    const obj = this.store.get(resourceKey(def), this.key(def, ns, name));
    if (!obj) throw errors.notFound(def, name);
    return { status: 200, body: obj };
  }

  list(def: ResourceDef, ns: string | undefined, query: ListQuery): Reply {
    const filter = buildFilter(def, query.labelSelector, query.fieldSelector);
    return { status: 200, body: listObjects(this.store, def, ns, query, filter) };
  }

  create(
    def: ResourceDef,
    ns: string | undefined,
    body: RequestBody,
    q: WriteQuery,
    ctx?: WriteContext,
  ): Reply {
    const check = this.bodyCheck(def, body, fieldValidationOf(q.fieldValidation, 'CreateOptions'));
    const obj = this.decodeBody(def, body.value, ns, check);
    const meta = obj.metadata;
    // The request's name is taken before generateName is resolved, as the create handler does.
    const requestName = meta.name;
    if (!meta.name && meta.generateName) meta.name = meta.generateName + randomSuffix();
    if (meta.resourceVersion)
      throw errors.internal('resourceVersion should not be set on objects to be created');
    const created = this.createObject(def, ns, obj, q, { ctx, warnings: check.warnings, requestName });
    return { status: 201, body: created, warnings: check.warnings };
  }

  update(
    def: ResourceDef,
    ns: string | undefined,
    name: string,
    body: RequestBody,
    q: WriteQuery,
    ctx?: WriteContext,
  ): Reply {
    const check = this.bodyCheck(def, body, fieldValidationOf(q.fieldValidation, 'UpdateOptions'));
    const obj = this.decodeBody(def, body.value, ns, check);
    if (obj.metadata.name !== name) {
      throw errors.badRequest(
        `the name of the object (${obj.metadata.name}) does not match the name on the URL (${name})`,
      );
    }
    const old = this.store.get(resourceKey(def), this.key(def, ns, name));
    if (!old) {
      if (!def.allowCreateOnUpdate) throw errors.notFound(def, name);
      delete obj.metadata.resourceVersion;
      const created = this.createObject(def, ns, obj, q, {
        ctx,
        warnings: check.warnings,
        requestName: name,
      });
      return { status: 201, body: created, warnings: check.warnings };
    }
    const rv = obj.metadata.resourceVersion;
    if (!rv) {
      if (!def.allowUnconditionalUpdate) {
        // genericregistry.Store.Update reports this against the resource (plural), not the Kind;
        // the uint64 0 renders as `0` since field errors print every integer type plainly.
        throw invalidError(def.group, def.plural, name, [
          field.invalidRaw('metadata.resourceVersion', '0', 'must be specified for an update'),
        ]);
      }
      obj.metadata.resourceVersion = old.metadata.resourceVersion;
    } else if (rv !== old.metadata.resourceVersion) {
      throw errors.conflict(def, name, OPTIMISTIC_LOCK);
    }
    const updated = this.commitUpdate(def, old, obj, q, { ctx, warnings: check.warnings });
    return { status: 200, body: updated, warnings: check.warnings };
  }

  patch(
    def: ResourceDef,
    ns: string | undefined,
    name: string,
    contentType: string,
    raw: string,
    q: WriteQuery,
    ctx?: WriteContext,
  ): Reply {
    const type = (contentType.split(';')[0] ?? '').trim().toLowerCase();
    const accepted: string[] = [
      PATCH_TYPES.json,
      PATCH_TYPES.merge,
      PATCH_TYPES.strategic,
      PATCH_TYPES.apply,
    ];
    if (!accepted.includes(type)) throw errors.unsupportedMediaType(type, accepted);
    const directive = fieldValidationOf(q.fieldValidation, 'PatchOptions');
    let doc: unknown;
    try {
      doc = type === PATCH_TYPES.apply ? parseYaml(raw) : JSON.parse(raw);
    } catch (err) {
      throw errors.badRequest(`error decoding patch: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (type === PATCH_TYPES.apply && !q.fieldManager) {
      throw invalidError('meta.k8s.io', 'PatchOptions', '', [
        field.required('fieldManager', 'is required for apply patch'),
      ]);
    }
    const old = this.store.get(resourceKey(def), this.key(def, ns, name));
    if (!old) {
      if (type !== PATCH_TYPES.apply) throw errors.notFound(def, name);
      // Server-side apply creates a missing object from the applied configuration.
      const check: FieldCheck = {
        directive,
        duplicates: [],
        source: { kind: 'patch', value: JSON.stringify(doc) },
        warnings: [],
      };
      const obj = this.decodeBody(def, doc, ns, check);
      if (obj.metadata.name !== name) {
        throw errors.badRequest(
          `the name of the object (${obj.metadata.name}) does not match the name on the URL (${name})`,
        );
      }
      const created = this.createObject(def, ns, obj, q, {
        ctx,
        warnings: check.warnings,
        requestName: name,
      });
      return { status: 201, body: created, warnings: check.warnings };
    }
    let result: unknown;
    const current = old as unknown as Json; // stored objects are plain JSON
    if (type === PATCH_TYPES.json) {
      const decodeError = jsonPatchDecodeError(doc);
      if (decodeError) throw errors.badRequest(decodeError);
      try {
        // A 422 for an operation that cannot be applied, as the apiserver's jsonPatcher answers.
        result = jsonPatch(current, doc as Record<string, unknown>[]);
      } catch (err) {
        if (err instanceof PatchError) throw errors.unprocessable(err.message);
        throw err;
      }
    } else {
      if (!isRecord(doc))
        throw errors.badRequest('json: cannot unmarshal array into Go value of type map[string]interface {}');
      try {
        result =
          type === PATCH_TYPES.strategic
            ? strategicMerge(current, doc as Json, { ...METADATA_MERGE_KEYS, ...def.mergeKeys })
            : mergePatch(current, doc as Json);
      } catch (err) {
        if (err instanceof StrategicMergeError) throw errors.unprocessable(err.message);
        throw err;
      }
    }
    // Unknown fields of the result can only come from the patch (stored objects have none).
    const check: FieldCheck = {
      directive,
      duplicates:
        directive !== 'Ignore' && (type === PATCH_TYPES.merge || type === PATCH_TYPES.strategic)
          ? findDuplicateKeys(raw)
          : [],
      source: {
        kind: 'patch',
        value: type === PATCH_TYPES.strategic ? goFormat(doc) : JSON.stringify(result),
      },
      warnings: [],
    };
    const obj = this.decodeBody(def, result, ns, check);
    if (obj.metadata.name !== name) {
      throw errors.badRequest(
        `the name of the object (${obj.metadata.name}) does not match the name on the URL (${name})`,
      );
    }
    const rv = obj.metadata.resourceVersion;
    if (rv && rv !== old.metadata.resourceVersion) throw errors.conflict(def, name, OPTIMISTIC_LOCK);
    obj.metadata.resourceVersion = old.metadata.resourceVersion;
    const updated = this.commitUpdate(def, old, obj, q, { ctx, warnings: check.warnings });
    return { status: 200, body: updated, warnings: check.warnings };
  }

  delete(def: ResourceDef, ns: string | undefined, name: string, body: unknown, ctx?: WriteContext): Reply {
    const opts = deleteOptionsSchema.safeParse(body ?? {});
    if (!opts.success)
      throw errors.badRequest(`DeleteOptions: ${opts.error.issues[0]?.message ?? 'invalid'}`);
    const pre = opts.data.preconditions;
    const options = { kind: 'DeleteOptions', apiVersion: 'meta.k8s.io/v1', ...opts.data };
    const warnings: string[] = [];
    const res = resourceKey(def);
    const key = this.key(def, ns, name);
    const old = this.store.get(res, key);
    if (def === this.namespaces) {
      if (old) this.admit(def, 'DELETE', null, old, ctx, warnings, { options, dryRun: false, name });
      const body = this.lifecycle.beginDelete(name, pre?.resourceVersion, pre?.uid);
      return { status: 200, body, warnings };
    }
    if (!old) throw errors.notFound(def, name);
    checkPreconditions(def, old, pre?.resourceVersion, pre?.uid);
    this.admit(def, 'DELETE', null, old, ctx, warnings, { options, dryRun: false, name });
    const grace = def.gracefulDeleteSeconds?.(old, opts.data.gracePeriodSeconds);
    if (grace !== undefined && grace > 0) {
      // Graceful deletion: marked now, removed by whoever runs the object (a shorter grace
      // period in a later delete moves the deadline closer, a longer one is ignored).
      const current = old.metadata.deletionGracePeriodSeconds;
      if (old.metadata.deletionTimestamp && typeof current === 'number' && current <= grace)
        return { status: 200, body: old, warnings };
      old.metadata.deletionTimestamp = nowSeconds(Date.now() + grace * 1000);
      old.metadata.deletionGracePeriodSeconds = grace;
      return { status: 200, body: this.store.put(res, old), warnings };
    }
    if ((old.metadata.finalizers as string[] | undefined)?.length) {
      // Finalizers hold the object: it only gets a deletionTimestamp until they are removed.
      if (!old.metadata.deletionTimestamp) {
        old.metadata.deletionTimestamp = nowSeconds();
        old.metadata.deletionGracePeriodSeconds = 0;
        return { status: 200, body: this.store.put(res, old), warnings };
      }
      return { status: 200, body: old, warnings };
    }
    this.store.remove(res, key);
    def.afterDelete?.(old);
    const answer = def.returnDeletedObject ? old : successStatus(def, name, old.metadata.uid);
    return { status: 200, body: answer, warnings };
  }

  /**
   * Validating admission of one write, after the registry's own validation and before storage.
   * Writes kubesim makes itself (no context) are not admitted, as no request carries them.
   */
  private admit(
    def: ResourceDef,
    operation: AdmissionOperation,
    object: KubeObject | null,
    oldObject: KubeObject | null,
    ctx: WriteContext | undefined,
    warnings: string[],
    request: { options: Record<string, unknown>; dryRun: boolean; name: string },
  ): void {
    if (!ctx || !this.admission) return;
    const namespace = def.namespaced ? ((object ?? oldObject)?.metadata.namespace ?? '') : '';
    const found = this.admission.validate(
      {
        def,
        operation,
        namespace,
        name: request.name,
        subresource: def.subresource ?? '',
        object,
        oldObject,
        user: ctx.user,
        dryRun: request.dryRun,
        options: request.options,
      },
      (k, v) => ctx.annotate(k, v),
    );
    warnings.push(...found);
  }

  private key(def: ResourceDef, ns: string | undefined, name: string): string {
    return objectKey({ metadata: def.namespaced && ns ? { name, namespace: ns } : { name } });
  }

  private bodyCheck(def: ResourceDef, body: RequestBody, directive: FieldValidation): FieldCheck {
    return {
      directive,
      duplicates: body.duplicates,
      source: { kind: 'body', resourceKind: def.kind, version: def.version },
      warnings: [],
    };
  }

  /**
   * The envelope checks every write body goes through, the resource's own decode (400 on wrong
   * types), then unknown and duplicate fields per fieldValidation. Unknown fields are dropped
   * from the returned object in every mode, as decoding into the Go type drops them.
   */
  private decodeBody(def: ResourceDef, body: unknown, ns: string | undefined, check: FieldCheck): KubeObject {
    const cannot = (why: string) =>
      errors.badRequest(`${def.kind} in version "${def.version}" cannot be handled as a ${def.kind}: ${why}`);
    if (!isRecord(body)) throw cannot('json: cannot unmarshal non-object into Go value');
    const env = objectEnvelopeSchema.safeParse(stripNulls(body));
    if (!env.success) {
      const issue = env.error.issues[0];
      throw cannot(`${issue?.path.join('.') ?? 'object'}: ${issue?.message ?? 'invalid'}`);
    }
    const { metadata = {}, ...rest } = env.data;
    if (rest.apiVersion !== undefined && rest.apiVersion !== apiVersionOf(def)) {
      throw errors.badRequest(
        `the API version in the data (${rest.apiVersion}) does not match the expected API version (${apiVersionOf(def)})`,
      );
    }
    if (rest.kind !== undefined && rest.kind !== def.kind) {
      throw cannot(`the kind in the data (${rest.kind}) does not match the expected kind (${def.kind})`);
    }
    const meta: KubeObject['metadata'] = { ...metadata, name: metadata.name ?? '' };
    if (def.namespaced) {
      if (meta.namespace && meta.namespace !== ns) {
        throw errors.badRequest(
          'the namespace of the provided object does not match the namespace sent on the request',
        );
      }
      if (ns) meta.namespace = ns;
    } else {
      delete meta.namespace;
    }
    const obj = shape(def, meta, rest);
    const bad = def.decode?.(obj);
    if (bad) throw errors.badRequest(bad);
    const pruned = pruneUnknownFields(def.schema, obj);
    const problems = strictMessages(pruned.unknown, check.duplicates);
    if (problems.length && check.directive === 'Strict') throw strictError(check.source, problems);
    if (check.directive === 'Warn') check.warnings.push(...problems);
    return pruned.value as KubeObject;
  }

  private validate(def: ResourceDef, obj: KubeObject, old: KubeObject | undefined): void {
    const errs = [...validateObjectMeta(obj, def.nameRule), ...(def.validate?.(obj, old) ?? [])];
    if (errs.length) throw invalidError(def.invalidGroup ?? def.group, def.kind, obj.metadata.name, errs);
  }

  private createObject(
    def: ResourceDef,
    ns: string | undefined,
    obj: KubeObject,
    q: WriteQuery,
    req: { ctx: WriteContext | undefined; warnings: string[]; requestName: string },
  ): KubeObject {
    const meta = obj.metadata;
    meta.uid = randomUUID();
    meta.creationTimestamp = nowSeconds();
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    delete meta.managedFields;
    if (def.tracksGeneration) meta.generation = 1;
    else delete meta.generation;
    def.prepare?.(obj, undefined);
    this.validate(def, obj, undefined);
    if (def.namespaced && ns) this.lifecycle.admitCreate(def, ns, meta.name);
    this.admit(def, 'CREATE', obj, null, req.ctx, req.warnings, {
      options: writeOptions('CreateOptions', q),
      dryRun: q.dryRun === 'All',
      name: req.requestName,
    });
    const res = resourceKey(def);
    if (this.store.get(res, objectKey(obj))) throw errors.alreadyExists(def, meta.name);
    // Placeholder so the RV the store stamps keeps its place in the metadata field order.
    meta.resourceVersion = '0';
    if (q.dryRun === 'All') return shape(def, meta, obj);
    def.beforeCommit?.(obj, undefined);
    return this.store.put(res, shape(def, meta, obj));
  }

  private commitUpdate(
    def: ResourceDef,
    old: KubeObject,
    obj: KubeObject,
    q: WriteQuery,
    req: { ctx: WriteContext | undefined; warnings: string[] },
  ): KubeObject {
    const meta = obj.metadata;
    if (meta.uid && meta.uid !== old.metadata.uid) {
      throw errors.conflict(
        def,
        meta.name,
        `Precondition failed: UID in precondition: ${meta.uid}, UID in object meta: ${old.metadata.uid ?? ''}`,
      );
    }
    // System-owned metadata always comes from storage.
    meta.uid = old.metadata.uid;
    meta.creationTimestamp = old.metadata.creationTimestamp;
    if (old.metadata.namespace) meta.namespace = old.metadata.namespace;
    if (old.metadata.deletionTimestamp) {
      meta.deletionTimestamp = old.metadata.deletionTimestamp;
      meta.deletionGracePeriodSeconds = old.metadata.deletionGracePeriodSeconds;
    } else {
      delete meta.deletionTimestamp;
      delete meta.deletionGracePeriodSeconds;
    }
    delete meta.managedFields;
    if (def.tracksGeneration) meta.generation = old.metadata.generation ?? 1;
    else delete meta.generation;
    def.prepare?.(obj, old);
    this.validate(def, obj, old);
    this.admit(def, 'UPDATE', obj, old, req.ctx, req.warnings, {
      options: writeOptions('UpdateOptions', q),
      dryRun: q.dryRun === 'All',
      name: old.metadata.name,
    });
    if (def.tracksGeneration && canonical(obj.spec) !== canonical(old.spec))
      meta.generation = (old.metadata.generation ?? 0) + 1;
    meta.resourceVersion = old.metadata.resourceVersion;
    const next = shape(def, meta, obj);
    // An update that changes nothing is not written: no new RV, no watch event.
    if (canonical(next) === canonical(old)) return old;
    if (q.dryRun === 'All') return next;
    def.beforeCommit?.(next, old);
    const res = resourceKey(def);
    if (
      def !== this.namespaces &&
      next.metadata.deletionTimestamp &&
      !(next.metadata.finalizers as string[] | undefined)?.length &&
      !((next.metadata.deletionGracePeriodSeconds as number | undefined) ?? 0)
    ) {
      // The last finalizer is gone from an object being deleted: the delete completes now (a
      // graceful deletion still running completes when whoever runs the object removes it).
      const removed = this.store.put(res, next);
      this.store.remove(res, objectKey(next));
      def.afterDelete?.(removed);
      return removed;
    }
    const stored = this.store.put(res, next);
    def.afterUpdate?.(stored, old);
    return stored;
  }
}
