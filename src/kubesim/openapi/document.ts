import { createHash } from 'node:crypto';
import type { ResourceDef } from '../resources/registry.js';
import type { Verb } from '../types.js';
import { DeleteOptions, Patch, Status } from './models.js';
import { ALL_KIND_MODELS } from './stored-models.js';
import {
  CREATE_PARAMS,
  DELETE_PARAMS,
  LIST_PARAMS,
  PARAMS,
  PATCH_PARAMS,
  type ParamName,
  type ParamSpec,
} from './params.js';
import { closure, modelName, refPrefix, type Dialect, type SchemaObject } from './schemas.js';

/**
 * The OpenAPI documents of kube-apiserver, built from the registry: `/openapi/v2` (Swagger 2.0,
 * all groups in one) and `/openapi/v3/{api/v1 | apis/<group>/<version>}` (OpenAPI 3.0, one per
 * group version), plus the v3 index. Pure functions: the HTTP side is in serve.ts.
 */

const PATCH_TYPES = [
  'application/apply-patch+yaml',
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
];

interface Served {
  def: ResourceDef;
  object: string;
  list: string;
}

function served(defs: readonly ResourceDef[]): Served[] {
  const out: Served[] = [];
  for (const def of defs) {
    // A kind without a model (a test-only resource, say) is served but not documented.
    const m = ALL_KIND_MODELS[`${def.group}/${def.version}/${def.kind}`];
    if (m) out.push({ def, object: modelName(m.object), list: modelName(m.list) });
  }
  return out;
}

/** `CoreV1`, `CoordinationV1`, `RbacAuthorizationV1`: the operationId infix of a group version. */
function opInfix(def: ResourceDef): string {
  const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
  const group = def.group
    ? def.group
        .replace(/\.k8s\.io$/, '')
        .split('.')
        .map(cap)
        .join('')
    : 'Core';
  return `${group}${cap(def.version)}`;
}

function tag(def: ResourceDef): string {
  return `${def.group ? def.group.replace(/\.k8s\.io$/, '').replace(/\./g, '_') : 'core'}_${def.version}`;
}

function gvk(def: ResourceDef) {
  return { group: def.group, kind: def.kind, version: def.version };
}

interface OpSpec {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  action: string;
  operationId: string;
  description: string;
  params: ParamName[];
  /** Request body schema name; PATCH bodies are Patch in every patch content type. */
  body?: string;
  responses: Record<string, string>;
}

function parameter(dialect: Dialect, name: ParamName, kind: string): SchemaObject {
  const p: ParamSpec = PARAMS[name];
  const description = p.description.replace('{kind}', kind);
  const base = { name, in: p.in, description, ...(p.required ? { required: true } : {}) };
  return dialect === 'v3'
    ? { ...base, schema: { type: p.type, uniqueItems: true } }
    : { ...base, type: p.type, uniqueItems: true };
}

function ref(dialect: Dialect, name: string): SchemaObject {
  return { $ref: `${refPrefix(dialect)}${name}` };
}

function operation(dialect: Dialect, s: Served, op: OpSpec): SchemaObject {
  const params = op.params.map((n) => parameter(dialect, n, s.def.kind));
  const responses: SchemaObject = {};
  for (const [code, schema] of Object.entries(op.responses)) {
    const description = code === '201' ? 'Created' : code === '202' ? 'Accepted' : 'OK';
    const produces =
      op.action === 'list' ? ['application/json', 'application/json;stream=watch'] : ['application/json'];
    responses[code] =
      dialect === 'v3'
        ? {
            description,
            content: Object.fromEntries(produces.map((t) => [t, { schema: ref(dialect, schema) }])),
          }
        : { description, schema: ref(dialect, schema) };
  }
  responses['401'] = { description: 'Unauthorized' };
  const out: SchemaObject = {
    tags: [tag(s.def)],
    description: op.description,
    operationId: op.operationId,
  };
  const bodyTypes = op.method === 'patch' ? PATCH_TYPES : ['*/*'];
  if (dialect === 'v3') {
    out.parameters = params;
    if (op.body) {
      out.requestBody = {
        content: Object.fromEntries(bodyTypes.map((t) => [t, { schema: ref(dialect, op.body ?? '') }])),
        required: op.method !== 'delete',
      };
    }
  } else {
    out.consumes = bodyTypes;
    out.produces = ['application/json', 'application/yaml'];
    out.schemes = ['https'];
    out.parameters = op.body
      ? [
          ...params,
          { name: 'body', in: 'body', required: op.method !== 'delete', schema: ref(dialect, op.body) },
        ]
      : params;
  }
  out.responses = responses;
  out['x-kubernetes-action'] = op.action;
  out['x-kubernetes-group-version-kind'] = gvk(s.def);
  return out;
}

/** Paths of one resource, keyed by URL template, then method. */
function resourcePaths(dialect: Dialect, s: Served): Record<string, SchemaObject> {
  const { def } = s;
  const prefix = def.group ? `/apis/${def.group}/${def.version}` : `/api/${def.version}`;
  const ns = def.namespaced ? 'Namespaced' : '';
  const id = (verb: string) => `${verb}${opInfix(def)}${ns}${def.kind}`;
  const scope: ParamName[] = def.namespaced ? ['namespace'] : [];
  const collection = `${prefix}${def.namespaced ? '/namespaces/{namespace}' : ''}/${def.plural}`;
  const item = `${collection}/{name}`;
  const has = (v: Verb) => def.verbs.includes(v);
  const deleted = def.returnDeletedObject ? s.object : modelName(Status);

  const ops: [string, OpSpec][] = [];
  if (has('list'))
    ops.push([
      collection,
      {
        method: 'get',
        action: 'list',
        operationId: id('list'),
        description: `list or watch objects of kind ${def.kind}`,
        params: [...scope, ...LIST_PARAMS],
        responses: { '200': s.list },
      },
    ]);
  if (has('create'))
    ops.push([
      collection,
      {
        method: 'post',
        action: 'post',
        operationId: id('create'),
        description: `create a ${def.kind}`,
        params: [...scope, ...CREATE_PARAMS],
        body: s.object,
        responses: { '200': s.object, '201': s.object, '202': s.object },
      },
    ]);
  if (has('get'))
    ops.push([
      item,
      {
        method: 'get',
        action: 'get',
        operationId: id('read'),
        description: `read the specified ${def.kind}`,
        params: ['name', ...scope, 'pretty'],
        responses: { '200': s.object },
      },
    ]);
  if (has('update'))
    ops.push([
      item,
      {
        method: 'put',
        action: 'put',
        operationId: id('replace'),
        description: `replace the specified ${def.kind}`,
        params: ['name', ...scope, ...CREATE_PARAMS],
        body: s.object,
        responses: { '200': s.object, '201': s.object },
      },
    ]);
  if (has('patch'))
    ops.push([
      item,
      {
        method: 'patch',
        action: 'patch',
        operationId: id('patch'),
        description: `partially update the specified ${def.kind}`,
        params: ['name', ...scope, ...PATCH_PARAMS],
        body: modelName(Patch),
        responses: { '200': s.object, '201': s.object },
      },
    ]);
  if (has('delete'))
    ops.push([
      item,
      {
        method: 'delete',
        action: 'delete',
        operationId: id('delete'),
        description: `delete a ${def.kind}`,
        params: ['name', ...scope, ...DELETE_PARAMS],
        body: modelName(DeleteOptions),
        responses: { '200': deleted, '202': deleted },
      },
    ]);
  if (def.namespaced && has('list'))
    ops.push([
      `${prefix}/${def.plural}`,
      {
        method: 'get',
        action: 'list',
        operationId: `list${opInfix(def)}${def.kind}ForAllNamespaces`,
        description: `list or watch objects of kind ${def.kind}`,
        params: LIST_PARAMS,
        responses: { '200': s.list },
      },
    ]);

  const paths: Record<string, SchemaObject> = {};
  for (const [path, op] of ops) {
    paths[path] = { ...(paths[path] ?? {}), [op.method]: operation(dialect, s, op) };
  }
  return paths;
}

function schemaRoots(list: Served[]): string[] {
  return [
    ...list.flatMap((s) => [s.object, s.list]),
    modelName(Status),
    modelName(DeleteOptions),
    modelName(Patch),
  ];
}

/** The path key of a group version in the v3 index: `api/v1`, `apis/coordination.k8s.io/v1`. */
export function gvPath(group: string, version: string): string {
  return group ? `apis/${group}/${version}` : `api/${version}`;
}

/** The OpenAPI 3.0 document of one group version; undefined when nothing of it is documented. */
export function v3Document(
  defs: readonly ResourceDef[],
  group: string,
  version: string,
): SchemaObject | undefined {
  const list = served(defs).filter((s) => s.def.group === group && s.def.version === version);
  if (list.length === 0) return undefined;
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: 'v1.34.0-kubesim' },
    paths: Object.assign({}, ...list.map((s) => resourcePaths('v3', s))) as SchemaObject,
    components: {
      schemas: closure('v3', schemaRoots(list)),
      securitySchemes: {
        BearerToken: {
          type: 'apiKey',
          description: 'Bearer Token authentication',
          name: 'authorization',
          in: 'header',
        },
      },
    },
    security: [{ BearerToken: [] }],
  };
}

/** The Swagger 2.0 document of everything served. */
export function v2Document(defs: readonly ResourceDef[]): SchemaObject {
  const list = served(defs);
  return {
    swagger: '2.0',
    info: { title: 'Kubernetes', version: 'v1.34.0-kubesim' },
    paths: Object.assign({}, ...list.map((s) => resourcePaths('v2', s))) as SchemaObject,
    definitions: closure('v2', schemaRoots(list)),
    securityDefinitions: {
      BearerToken: {
        description: 'Bearer Token authentication',
        type: 'apiKey',
        name: 'authorization',
        in: 'header',
      },
    },
    security: [{ BearerToken: [] }],
  };
}

/** What clients use to cache a document: the upper-case hex SHA-512 of its bytes, as the apiserver computes it. */
export function documentHash(body: string): string {
  return createHash('sha512').update(body).digest('hex').toUpperCase();
}

/** The /openapi/v3 index: one entry per group version, each with a content-addressed URL. */
export function v3Index(defs: readonly ResourceDef[]): {
  paths: Record<string, { serverRelativeURL: string }>;
} {
  const paths: Record<string, { serverRelativeURL: string }> = {};
  const seen = new Set<string>();
  for (const d of defs) {
    const key = gvPath(d.group, d.version);
    if (seen.has(key)) continue;
    seen.add(key);
    const doc = v3Document(defs, d.group, d.version);
    if (doc)
      paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${documentHash(JSON.stringify(doc))}` };
  }
  return { paths };
}
