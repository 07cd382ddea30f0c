import { clone, isRecord, type Json } from './types.js';

/**
 * Strategic merge patch (application/strategic-merge-patch+json), the subset kubectl and
 * client-go send: maps merge and `null` deletes as in a JSON merge patch; lists with a merge key
 * merge element by element; and the directives `$patch` (replace / delete / merge),
 * `$setElementOrder/<list>`, `$deleteFromPrimitiveList/<list>` and `$retainKeys` are honoured.
 *
 * `mergeKeys` maps a list's dotted path (no indexes, e.g. `spec.ports`) to its merge key, or to
 * '' for a list of primitives merged as a set (like `metadata.finalizers`). Lists without an
 * entry are replaced, as the real server does for lists without a patch strategy.
 */
export type MergeKeys = Readonly<Record<string, string>>;

export class StrategicMergeError extends Error {}

type JsonMap = { [k: string]: Json };

const SET_ORDER = '$setElementOrder/';
const DELETE_FROM = '$deleteFromPrimitiveList/';

function keyOf(item: Json, mergeKey: string): Json | undefined {
  return isRecord(item) ? item[mergeKey] : undefined;
}

function withoutDirectives(value: Json): Json {
  if (Array.isArray(value)) return value.map(withoutDirectives);
  if (!isRecord(value)) return value;
  const out: JsonMap = {};
  for (const [k, v] of Object.entries(value)) if (!k.startsWith('$')) out[k] = withoutDirectives(v);
  return out;
}

function mergeList(current: Json[], patch: Json[], mergeKey: string, keys: MergeKeys, path: string): Json[] {
  if (mergeKey === '') {
    const out = [...current];
    for (const v of patch) if (!out.some((x) => JSON.stringify(x) === JSON.stringify(v))) out.push(clone(v));
    return out;
  }
  if (patch.some((p) => isRecord(p) && p['$patch'] === 'replace')) {
    return patch.filter((p) => !(isRecord(p) && p['$patch'] === 'replace')).map(withoutDirectives);
  }
  let out = current.map((x) => clone(x));
  for (const element of patch) {
    if (!isRecord(element))
      throw new StrategicMergeError(`${path}: list elements must be objects with "${mergeKey}"`);
    const key = element[mergeKey];
    if (key === undefined) throw new StrategicMergeError(`${path}: element has no merge key "${mergeKey}"`);
    const same = (x: Json) => JSON.stringify(keyOf(x, mergeKey)) === JSON.stringify(key);
    if (element['$patch'] === 'delete') {
      out = out.filter((x) => !same(x));
      continue;
    }
    const i = out.findIndex(same);
    if (i >= 0) out[i] = strategicMerge(out[i]!, element, keys, path);
    else out.push(withoutDirectives(element));
  }
  return out;
}

/** Orders a merged list by `$setElementOrder`; elements it does not name keep their place after. */
function order(list: Json[], wanted: Json, mergeKey: string): Json[] {
  if (!Array.isArray(wanted)) return list;
  const keyText = (x: Json) => JSON.stringify(mergeKey === '' ? x : keyOf(x, mergeKey));
  const wantedKeys = wanted.map((w) => JSON.stringify(mergeKey === '' ? w : keyOf(w, mergeKey)));
  const rank = (x: Json) => {
    const r = wantedKeys.indexOf(keyText(x));
    return r < 0 ? wantedKeys.length : r;
  };
  return [...list].sort((a, b) => rank(a) - rank(b));
}

export function strategicMerge(target: Json, patch: Json, keys: MergeKeys, path = ''): Json {
  if (!isRecord(patch)) return clone(patch);
  if (patch['$patch'] === 'replace') return withoutDirectives(patch);
  if (patch['$patch'] === 'delete') return null;
  const out: JsonMap = isRecord(target) ? clone(target) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (k.startsWith('$')) continue;
    const p = path ? `${path}.${k}` : k;
    if (v === null) {
      delete out[k];
    } else if (Array.isArray(v) && p in keys) {
      const current = out[k];
      out[k] = mergeList(Array.isArray(current) ? current : [], v, keys[p]!, keys, p);
    } else if (isRecord(v)) {
      const merged = strategicMerge(out[k] ?? null, v, keys, p);
      if (merged === null) delete out[k];
      else out[k] = merged;
    } else {
      out[k] = withoutDirectives(v);
    }
  }
  for (const [k, v] of Object.entries(patch)) {
    if (k.startsWith(DELETE_FROM) && Array.isArray(v)) {
      const field = k.slice(DELETE_FROM.length);
      const current = out[field];
      if (Array.isArray(current))
        out[field] = current.filter((x) => !v.some((d) => JSON.stringify(d) === JSON.stringify(x)));
    }
  }
  for (const [k, v] of Object.entries(patch)) {
    if (k.startsWith(SET_ORDER)) {
      const field = k.slice(SET_ORDER.length);
      const current = out[field];
      const p = path ? `${path}.${field}` : field;
      if (Array.isArray(current)) out[field] = order(current, v, keys[p] ?? '');
    }
  }
  const retain = patch['$retainKeys'];
  if (Array.isArray(retain)) {
    for (const k of Object.keys(out)) if (!retain.includes(k)) delete out[k];
  }
  return out;
}

/** Merge keys every object shares (ObjectMeta's patch strategies). */
export const METADATA_MERGE_KEYS: MergeKeys = {
  'metadata.ownerReferences': 'uid',
  'metadata.finalizers': '',
};
