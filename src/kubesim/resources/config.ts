import { isRecord, type KubeObject } from '../types.js';
import { field, type FieldError } from '../validation/field.js';
import { basicResource } from './basic.js';
import { configMapObjectSchema, secretObjectSchema, serviceAccountObjectSchema } from './config-schema.js';
import { META_FIELD_LABELS, type ResourceDef } from './registry.js';

/** core/v1 ServiceAccounts, Secrets and ConfigMaps (pkg/registry/core/{serviceaccount,secret,configmap}). */

const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** IsConfigMapKey: the rule for Secret and ConfigMap data keys. */
function keyErrors(path: string, keys: string[]): FieldError[] {
  const errs: FieldError[] = [];
  for (const k of keys) {
    if (k.length > 253) errs.push(field.invalid(path, k, 'must be no more than 253 characters'));
    else if (!CONFIG_KEY.test(k))
      errs.push(
        field.invalid(
          path,
          k,
          "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
        ),
      );
  }
  return errs;
}

function immutableErrors(obj: KubeObject, old: KubeObject | undefined, fields: string[]): FieldError[] {
  if (old?.['immutable'] !== true) return [];
  const errs: FieldError[] = [];
  for (const f of fields) {
    if (JSON.stringify(obj[f] ?? {}) !== JSON.stringify(old[f] ?? {}))
      errs.push(field.forbidden(f, 'field is immutable when `immutable` is set'));
  }
  if (obj['immutable'] !== true)
    errs.push(field.forbidden('immutable', 'field is immutable when `immutable` is set'));
  return errs;
}

export function serviceAccountResource(): ResourceDef {
  return basicResource(
    {
      group: '',
      version: 'v1',
      kind: 'ServiceAccount',
      plural: 'serviceaccounts',
      namespaced: true,
      shortNames: ['sa'],
    },
    serviceAccountObjectSchema,
  );
}

export function secretResource(): ResourceDef {
  return basicResource(
    { group: '', version: 'v1', kind: 'Secret', plural: 'secrets', namespaced: true },
    secretObjectSchema,
    {
      prepare(obj) {
        // The real server folds stringData into data during conversion; stringData is never stored.
        const stringData = obj['stringData'] as Record<string, string> | undefined;
        if (stringData) {
          const data = { ...((obj['data'] as Record<string, string> | undefined) ?? {}) };
          for (const [k, v] of Object.entries(stringData))
            data[k] = Buffer.from(v, 'utf8').toString('base64');
          obj['data'] = data;
          delete obj['stringData'];
        }
        obj['type'] ??= 'Opaque';
      },
      fieldLabels: { ...META_FIELD_LABELS, type: (o) => (typeof o['type'] === 'string' ? o['type'] : '') },
      validate(obj, old) {
        const data = (obj['data'] as Record<string, string> | undefined) ?? {};
        const errs = keyErrors('data', Object.keys(data));
        for (const [k, v] of Object.entries(data)) {
          if (!BASE64.test(v))
            errs.push(field.invalid(`data[${k}]`, '<secret contents redacted>', 'illegal base64 data'));
        }
        const size = Object.values(data).reduce((n, v) => n + Buffer.from(v, 'base64').length, 0);
        if (size > 1024 * 1024)
          errs.push(field.invalid('data', '', 'Too long: may not be more than 1048576 bytes'));
        if (old && obj['type'] !== old['type'])
          errs.push(field.invalid('type', obj['type'], 'field is immutable'));
        return [...errs, ...immutableErrors(obj, old, ['data'])];
      },
    },
  );
}

export function configMapResource(): ResourceDef {
  return basicResource(
    {
      group: '',
      version: 'v1',
      kind: 'ConfigMap',
      plural: 'configmaps',
      namespaced: true,
      shortNames: ['cm'],
    },
    configMapObjectSchema,
    {
      // data and binaryData are omitempty maps: an empty one is not stored (CEL sees no field).
      prepare(obj) {
        for (const k of ['data', 'binaryData'])
          if (isRecord(obj[k]) && Object.keys(obj[k]).length === 0) delete obj[k];
      },
      validate(obj, old) {
        const data = (obj['data'] as Record<string, string> | undefined) ?? {};
        const binary = (obj['binaryData'] as Record<string, string> | undefined) ?? {};
        const errs = [
          ...keyErrors('data', Object.keys(data)),
          ...keyErrors('binaryData', Object.keys(binary)),
        ];
        for (const k of Object.keys(binary))
          if (k in data) errs.push(field.invalid('data', k, 'duplicate of key present in binaryData'));
        return [...errs, ...immutableErrors(obj, old, ['data', 'binaryData'])];
      },
    },
  );
}
