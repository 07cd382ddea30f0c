import { z } from 'zod';
import type { ListBody } from '../list.js';
import type { ResourceDef } from '../resources/registry.js';
import { apiVersionOf } from '../resources/registry.js';
import { errors } from '../status.js';
import { isRecord, type KubeObject, type WatchEventType } from '../types.js';
import { printerFor, type Cell, type ColumnDefinition } from './printers.js';

/**
 * Server-side printing (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`): the apiserver's
 * content negotiation for Tables, TableOptions (`includeObject`, parsed with zod) and the
 * conversion of a list, a single object or a watch event into a `meta.k8s.io` Table.
 */

export type TableVersion = 'v1' | 'v1beta1';

/**
 * The Table version the Accept header asks for, or undefined for the plain object. Clauses are
 * taken in the client's order, as the apiserver does; kinds of output kubesim does not produce
 * (protobuf, PartialObjectMetadata) are skipped.
 */
export function tableVersion(accept: string | undefined): TableVersion | undefined {
  for (const clause of (accept ?? '').split(',')) {
    const [type = '', ...rawParams] = clause.split(';').map((s) => s.trim());
    const params = new Map(
      rawParams.map((p) => {
        const i = p.indexOf('=');
        return [p.slice(0, i).trim().toLowerCase(), p.slice(i + 1).trim()] as const;
      }),
    );
    const t = type.toLowerCase();
    if (t !== 'application/json' && t !== '*/*' && t !== 'application/*') continue;
    const as = params.get('as');
    if (as === undefined) return undefined;
    if (as === 'Table' && params.get('g') === 'meta.k8s.io') {
      const v = params.get('v');
      if (v === 'v1' || v === 'v1beta1') return v;
    }
  }
  return undefined;
}

export const TABLE_CONTENT_TYPE = (v: TableVersion) => `application/json;as=Table;v=${v};g=meta.k8s.io`;

const INCLUDE_OBJECT = ['', 'Metadata', 'None', 'Object'] as const;
const tableOptionsSchema = z.object({ includeObject: z.enum(INCLUDE_OBJECT).optional() });
export type IncludeObject = 'Metadata' | 'None' | 'Object';

/** metav1.TableOptions from the query; a bad value is a 400 with the validation wording. */
export function includeObjectOf(params: URLSearchParams): IncludeObject {
  const raw = params.get('includeObject') ?? undefined;
  const parsed = tableOptionsSchema.safeParse({ includeObject: raw });
  if (!parsed.success) {
    // The wording of the Table conversion's own check (ValidateTableOptions).
    throw errors.badRequest(
      `Unable to convert to Table as requested: includeObject: Invalid value: ${JSON.stringify(raw)}: must be 'Metadata', 'Object', 'None', or empty`,
    );
  }
  const v = parsed.data.includeObject;
  return v === undefined || v === '' ? 'Metadata' : v;
}

export interface TableOptions {
  version: TableVersion;
  includeObject: IncludeObject;
  /** Watches send the column definitions with the first event only. */
  noHeaders?: boolean;
}

export interface TableBody {
  kind: 'Table';
  apiVersion: string;
  metadata: { resourceVersion?: string | undefined; continue?: string; remainingItemCount?: number };
  columnDefinitions?: ColumnDefinition[];
  rows: { cells: Cell[]; object: unknown }[];
}

function rowObject(def: ResourceDef, obj: KubeObject, opts: TableOptions): unknown {
  switch (opts.includeObject) {
    case 'None':
      return null;
    case 'Object':
      return { ...obj, kind: def.kind, apiVersion: apiVersionOf(def) };
    case 'Metadata':
      return {
        kind: 'PartialObjectMetadata',
        apiVersion: `meta.k8s.io/${opts.version}`,
        metadata: obj.metadata,
      };
  }
}

function table(
  def: ResourceDef,
  items: KubeObject[],
  metadata: TableBody['metadata'],
  opts: TableOptions,
  now: number,
): TableBody {
  const printer = printerFor(def.group, def.kind);
  return {
    kind: 'Table',
    apiVersion: `meta.k8s.io/${opts.version}`,
    metadata,
    ...(opts.noHeaders ? {} : { columnDefinitions: printer.columns }),
    rows: items.map((obj) => ({ cells: printer.cells(obj, now), object: rowObject(def, obj, opts) })),
  };
}

/** A list reply as a Table (list metadata kept: resourceVersion, continue, remainingItemCount). */
export function listTable(def: ResourceDef, list: ListBody, opts: TableOptions, now = Date.now()): TableBody {
  const items = list.items.map(
    (i) => ({ ...i, kind: def.kind, apiVersion: apiVersionOf(def) }) as KubeObject,
  );
  return table(def, items, { ...list.metadata }, opts, now);
}

/** A single object as a one-row Table. */
export function objectTable(
  def: ResourceDef,
  obj: KubeObject,
  opts: TableOptions,
  now = Date.now(),
): TableBody {
  return table(def, [obj], { resourceVersion: obj.metadata.resourceVersion }, opts, now);
}

/**
 * The object of one watch event when the watch asked for Tables: a one-row Table, the first with
 * column definitions; a BOOKMARK becomes an empty Table carrying its resourceVersion; ERROR
 * events keep their Status.
 */
export function watchTableEncoder(
  def: ResourceDef,
  opts: TableOptions,
): (type: WatchEventType, object: unknown) => unknown {
  let headersSent = false;
  return (type, object) => {
    if (type === 'ERROR' || !isRecord(object) || !isRecord(object.metadata)) return object;
    const o = { ...opts, noHeaders: headersSent };
    headersSent = true;
    if (type === 'BOOKMARK') {
      const rv = object.metadata.resourceVersion;
      return { ...table(def, [], typeof rv === 'string' ? { resourceVersion: rv } : {}, o, Date.now()) };
    }
    return objectTable(def, object as KubeObject, o);
  };
}
