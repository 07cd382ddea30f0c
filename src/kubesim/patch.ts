import { z } from 'zod';
import { clone, isRecord, type Json } from './types.js';

/**
 * The patch formats kubesim accepts. Strategic merge patch lives in strategic-merge.ts; an
 * apply patch is merged like a JSON merge patch (RFC 7386); see docs/kubesim.md.
 */

export const PATCH_TYPES = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
} as const;

/** RFC 7386: objects merge recursively, null deletes, everything else replaces. */
export function mergePatch(target: Json, patch: Json): Json {
  if (!isRecord(patch)) return clone(patch);
  const out: { [k: string]: Json } = isRecord(target) ? clone(target) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k] ?? null, v);
  }
  return out;
}

const jsonPatchOp = z.discriminatedUnion('op', [
  z.object({ op: z.literal('add'), path: z.string(), value: z.json() }),
  z.object({ op: z.literal('replace'), path: z.string(), value: z.json() }),
  z.object({ op: z.literal('test'), path: z.string(), value: z.json() }),
  z.object({ op: z.literal('remove'), path: z.string() }),
  z.object({ op: z.literal('move'), from: z.string(), path: z.string() }),
  z.object({ op: z.literal('copy'), from: z.string(), path: z.string() }),
]);
export type JsonPatchOp = z.infer<typeof jsonPatchOp>;
const OPS = ['add', 'remove', 'replace', 'move', 'copy', 'test'];

/** Go's name for a JSON value's type in `json: cannot unmarshal X into ...` messages. */
function goJsonType(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (v === null) return 'null';
  return typeof v === 'object' ? 'object' : typeof v === 'boolean' ? 'bool' : typeof v;
}

/**
 * jsonpatch.DecodePatch: the body must be an array of objects, else the decoder fails (a 400
 * BadRequest). Returns the decode error text, or undefined.
 */
export function jsonPatchDecodeError(doc: unknown): string | undefined {
  if (!Array.isArray(doc))
    return `json: cannot unmarshal ${goJsonType(doc)} into Go value of type jsonpatch.Patch`;
  const docs: unknown[] = doc;
  const bad = docs.findIndex((op) => !isRecord(op));
  if (bad >= 0) {
    return `json: cannot unmarshal ${goJsonType(docs[bad])} into Go value of type jsonpatch.Operation`;
  }
  return undefined;
}

/**
 * One decoded operation, checked the way Patch.Apply does when it reaches it: an unknown op is
 * `Unexpected kind: <op>`, a missing or mistyped member names the operation and the member.
 */
function checkedOp(raw: Record<string, unknown>, index: number): JsonPatchOp {
  const kind = raw.op;
  if (typeof kind !== 'string' || !OPS.includes(kind)) {
    throw new PatchError(`Unexpected kind: ${typeof kind === 'string' ? kind : 'unknown'}`);
  }
  const parsed = jsonPatchOp.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const member = issue?.path.join('.') ?? 'operation';
  throw new PatchError(
    `${kind} operation at index ${index}: "${member}" is ${raw[member] === undefined ? 'missing' : 'not valid'}`,
  );
}

export class PatchError extends Error {}

function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new PatchError(`invalid JSON pointer: ${JSON.stringify(pointer)}`);
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function container(doc: Json, tokens: string[], pointer: string): Json {
  let cur: Json = doc;
  for (const t of tokens) {
    if (Array.isArray(cur)) cur = cur[Number(t)] ?? null;
    else if (isRecord(cur) && t in cur) cur = cur[t] ?? null;
    else throw new PatchError(`doc is missing path: ${JSON.stringify(pointer)}: missing value`);
    if (cur === null) throw new PatchError(`doc is missing path: ${JSON.stringify(pointer)}: missing value`);
  }
  return cur;
}

function getAt(doc: Json, pointer: string): Json {
  const tokens = parsePointer(pointer);
  const last = tokens.pop();
  if (last === undefined) return doc;
  const parent = container(doc, tokens, pointer);
  if (Array.isArray(parent)) {
    const v = parent[Number(last)];
    if (v === undefined) throw new PatchError(`doc is missing path: ${JSON.stringify(pointer)}`);
    return v;
  }
  if (isRecord(parent) && last in parent) return parent[last] ?? null;
  throw new PatchError(`doc is missing path: ${JSON.stringify(pointer)}: missing value`);
}

function removeAt(doc: Json, pointer: string): Json {
  const tokens = parsePointer(pointer);
  const last = tokens.pop();
  if (last === undefined) throw new PatchError('cannot remove the whole document');
  const parent = container(doc, tokens, pointer);
  if (Array.isArray(parent)) {
    const i = Number(last);
    if (!Number.isInteger(i) || i < 0 || i >= parent.length)
      throw new PatchError(`Unable to remove nonexistent key: ${last}: missing value`);
    return parent.splice(i, 1)[0] ?? null;
  }
  if (isRecord(parent) && last in parent) {
    const v = parent[last] ?? null;
    delete parent[last];
    return v;
  }
  throw new PatchError(`Unable to remove nonexistent key: ${last}: missing value`);
}

function addAt(doc: Json, pointer: string, value: Json, replace: boolean): Json {
  const tokens = parsePointer(pointer);
  const last = tokens.pop();
  if (last === undefined) return clone(value);
  const parent = container(doc, tokens, pointer);
  if (Array.isArray(parent)) {
    const i = last === '-' ? parent.length : Number(last);
    if (!Number.isInteger(i) || i < 0 || i > parent.length || (replace && i >= parent.length)) {
      throw new PatchError(`Unable to access invalid index: ${last}: invalid index referenced`);
    }
    if (replace) parent[i] = clone(value);
    else parent.splice(i, 0, clone(value));
  } else if (isRecord(parent)) {
    if (replace && !(last in parent))
      throw new PatchError(`replace operation does not apply: doc is missing key: ${pointer}: missing value`);
    parent[last] = clone(value);
  } else {
    throw new PatchError(`doc is missing path: ${JSON.stringify(pointer)}: missing value`);
  }
  return doc;
}

/** RFC 6902 over a copy of `doc`; `ops` passed jsonPatchDecodeError. Throws PatchError. */
export function jsonPatch(doc: Json, rawOps: Record<string, unknown>[]): Json {
  let out = clone(doc);
  for (const [i, raw] of rawOps.entries()) {
    const op = checkedOp(raw, i);
    switch (op.op) {
      case 'add':
        out = addAt(out, op.path, op.value, false);
        break;
      case 'replace':
        out = addAt(out, op.path, op.value, true);
        break;
      case 'remove':
        removeAt(out, op.path);
        break;
      case 'test':
        if (JSON.stringify(getAt(out, op.path)) !== JSON.stringify(op.value)) {
          throw new PatchError(`testing value ${op.path} failed: test failed`);
        }
        break;
      case 'move': {
        const v = removeAt(out, op.from);
        out = addAt(out, op.path, v, false);
        break;
      }
      case 'copy':
        out = addAt(out, op.path, getAt(out, op.from), false);
        break;
    }
  }
  return out;
}
