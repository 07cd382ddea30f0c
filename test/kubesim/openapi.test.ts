import { describe, expect, it } from 'vitest';
import { objectMetaInSchema } from '../../src/kubesim/schemas.js';
import { METADATA_MERGE_KEYS } from '../../src/kubesim/strategic-merge.js';
import { serviceSpecFullSchema as serviceSpecSchema } from '../../src/kubesim/resources/service-schema.js';
import type { Kubesim } from '../../src/kubesim/index.js';
import { useSim, type Loose } from './helpers.js';

const start = useSim();

async function get(
  sim: Kubesim,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; body: Loose }> {
  const res = await fetch(sim.url + path, {
    headers: { Authorization: `Bearer ${sim.adminToken}`, ...headers },
    redirect: 'manual',
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // empty (304, 301)
  }
  return { status: res.status, headers: res.headers, body };
}

/** Every "$ref" in a document, to check that each one resolves inside it. */
function refs(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((n) => refs(n, out));
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else refs(v, out);
    }
  }
  return out;
}

async function v3(sim: Kubesim, gv: string): Promise<Loose> {
  const index = await get(sim, '/openapi/v3');
  const url = index.body.paths[gv].serverRelativeURL as string;
  const doc = await get(sim, url);
  expect(doc.status).toBe(200);
  return doc.body;
}

describe('kubesim OpenAPI v3', () => {
  it('lists one content-addressed document per served group version', async () => {
    const sim = await start();
    const index = await get(sim, '/openapi/v3');
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toBe('application/json');
    expect(Object.keys(index.body.paths).sort()).toEqual([
      'api/v1',
      'apis/admissionregistration.k8s.io/v1',
      'apis/apps/v1',
      'apis/authentication.k8s.io/v1',
      'apis/authorization.k8s.io/v1',
      'apis/batch/v1',
      'apis/coordination.k8s.io/v1',
      'apis/events.k8s.io/v1',
      'apis/networking.k8s.io/v1',
      'apis/policy/v1',
      'apis/rbac.authorization.k8s.io/v1',
    ]);
    for (const [gv, entry] of Object.entries<{ serverRelativeURL: string }>(index.body.paths)) {
      expect(entry.serverRelativeURL).toMatch(new RegExp(`^/openapi/v3/${gv}\\?hash=[0-9A-F]{128}$`));
    }
  });

  it('documents each stored kind under its OpenAPI name with its group-version-kind', async () => {
    const sim = await start();
    const core = await v3(sim, 'api/v1');
    expect(core.openapi).toBe('3.0.0');
    const schemas = core.components.schemas;
    expect(schemas['io.k8s.api.core.v1.Service']['x-kubernetes-group-version-kind']).toEqual([
      { group: '', version: 'v1', kind: 'Service' },
    ]);
    expect(schemas['io.k8s.api.core.v1.Namespace']['x-kubernetes-group-version-kind']).toEqual([
      { group: '', version: 'v1', kind: 'Namespace' },
    ]);
    expect(schemas['io.k8s.api.core.v1.Event']['x-kubernetes-group-version-kind']).toEqual([
      { group: '', version: 'v1', kind: 'Event' },
    ]);
    // A group's document carries only its own kinds (plus what they reference).
    expect(schemas['io.k8s.api.coordination.v1.Lease']).toBeUndefined();
    const lease = await v3(sim, 'apis/coordination.k8s.io/v1');
    expect(
      lease.components.schemas['io.k8s.api.coordination.v1.Lease']['x-kubernetes-group-version-kind'],
    ).toEqual([{ group: 'coordination.k8s.io', version: 'v1', kind: 'Lease' }]);
    expect(lease.components.schemas['io.k8s.api.core.v1.Service']).toBeUndefined();

    const port = schemas['io.k8s.api.core.v1.ServicePort'];
    expect(port.required).toEqual(['port']);
    expect(port.properties.port).toMatchObject({ type: 'integer', format: 'int32' });
    expect(port.properties.targetPort.allOf).toEqual([
      { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.util.intstr.IntOrString' },
    ]);
    expect(schemas['io.k8s.apimachinery.pkg.util.intstr.IntOrString']).toMatchObject({
      type: 'string',
      format: 'int-or-string',
    });
    expect(schemas['io.k8s.api.core.v1.ServiceSpec'].properties.type.enum).toEqual([
      'ClusterIP',
      'ExternalName',
      'LoadBalancer',
      'NodePort',
    ]);
  });

  it('declares fieldValidation and the strategic merge patch type on each PATCH operation', async () => {
    const sim = await start();
    const core = await v3(sim, 'api/v1');
    const patch = core.paths['/api/v1/namespaces/{namespace}/services/{name}'].patch;
    expect(patch['x-kubernetes-group-version-kind']).toEqual({ group: '', kind: 'Service', version: 'v1' });
    expect(patch['x-kubernetes-action']).toBe('patch');
    expect(patch.operationId).toBe('patchCoreV1NamespacedService');
    const params = patch.parameters.map((p: Loose) => `${p.in}:${p.name}`);
    expect(params).toEqual(
      expect.arrayContaining(['query:fieldValidation', 'query:dryRun', 'query:fieldManager']),
    );
    expect(Object.keys(patch.requestBody.content)).toContain('application/strategic-merge-patch+json');

    const nsPatch = core.paths['/api/v1/namespaces/{name}'].patch;
    expect(nsPatch['x-kubernetes-group-version-kind']).toEqual({
      group: '',
      kind: 'Namespace',
      version: 'v1',
    });
    expect(nsPatch.parameters.map((p: Loose) => p.name)).toContain('fieldValidation');
    expect(core.paths['/api/v1/services'].get.operationId).toBe('listCoreV1ServiceForAllNamespaces');
    // Services come back from delete as the object, events as a Status.
    expect(
      core.paths['/api/v1/namespaces/{namespace}/services/{name}'].delete.responses['200'].content[
        'application/json'
      ].schema.$ref,
    ).toBe('#/components/schemas/io.k8s.api.core.v1.Service');
    expect(
      core.paths['/api/v1/namespaces/{namespace}/events/{name}'].delete.responses['200'].content[
        'application/json'
      ].schema.$ref,
    ).toBe('#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Status');
  });

  it('carries the merge keys kubesim applies strategic merge patches with', async () => {
    const sim = await start();
    const schemas = (await v3(sim, 'api/v1')).components.schemas;
    const ports = schemas['io.k8s.api.core.v1.ServiceSpec'].properties.ports;
    expect(ports['x-kubernetes-patch-merge-key']).toBe('port');
    expect(ports['x-kubernetes-patch-strategy']).toBe('merge');
    const meta = schemas['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta'].properties;
    expect(METADATA_MERGE_KEYS['metadata.ownerReferences']).toBe('uid');
    expect(meta.ownerReferences['x-kubernetes-patch-merge-key']).toBe('uid');
    expect(meta.finalizers['x-kubernetes-patch-strategy']).toBe('merge');
  });

  it('documents every field kubesim decodes', async () => {
    const sim = await start();
    const schemas = (await v3(sim, 'api/v1')).components.schemas;
    const specFields = Object.keys(schemas['io.k8s.api.core.v1.ServiceSpec'].properties);
    expect(specFields).toEqual(expect.arrayContaining(Object.keys(serviceSpecSchema.shape)));
    const metaFields = Object.keys(schemas['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta'].properties);
    expect(metaFields).toEqual(expect.arrayContaining(Object.keys(objectMetaInSchema.shape)));
  });

  it('every reference in every document resolves inside it', async () => {
    const sim = await start();
    const index = await get(sim, '/openapi/v3');
    for (const gv of Object.keys(index.body.paths)) {
      const doc = await v3(sim, gv);
      for (const ref of refs(doc)) {
        expect(ref.startsWith('#/components/schemas/')).toBe(true);
        expect(doc.components.schemas[ref.slice('#/components/schemas/'.length)], ref).toBeDefined();
      }
    }
  });

  it('caches by content address: immutable with the hash, 304 on a matching ETag, 301 for a stale hash', async () => {
    const sim = await start();
    const index = await get(sim, '/openapi/v3');
    const url = index.body.paths['api/v1'].serverRelativeURL as string;
    const first = await get(sim, url);
    expect(first.headers.get('cache-control')).toBe('public, immutable');
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"[0-9A-F]{128}"$/);
    expect(url.endsWith(etag!.slice(1, -1))).toBe(true);

    const again = await get(sim, url, { 'If-None-Match': etag! });
    expect(again.status).toBe(304);

    const bare = await get(sim, '/openapi/v3/api/v1');
    expect(bare.status).toBe(200);
    expect(bare.headers.get('cache-control')).toBe('no-cache, private');

    const stale = await get(sim, '/openapi/v3/api/v1?hash=0123');
    expect(stale.status).toBe(301);
    expect(stale.headers.get('location')).toBe(url);
  });

  it('answers unknown group versions with 404 and unauthenticated requests with 401', async () => {
    const sim = await start();
    expect((await get(sim, '/openapi/v3/apis/autoscaling/v2')).status).toBe(404);
    expect((await get(sim, '/openapi/v3/api/v2')).status).toBe(404);
    const anon = await fetch(`${sim.url}/openapi/v3`);
    expect(anon.status).toBe(401);
  });
});

describe('kubesim OpenAPI v2', () => {
  it('serves one Swagger 2.0 document whose references resolve', async () => {
    const sim = await start();
    const res = await get(sim, '/openapi/v2', { Accept: 'application/json' });
    expect(res.status).toBe(200);
    const doc = res.body;
    expect(doc.swagger).toBe('2.0');
    expect(doc.definitions['io.k8s.api.coordination.v1.Lease']).toBeDefined();
    expect(doc.definitions['io.k8s.api.core.v1.Service'].properties.metadata.$ref).toBe(
      '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta',
    );
    const patch = doc.paths['/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}'].patch;
    expect(patch.consumes).toContain('application/strategic-merge-patch+json');
    expect(patch.parameters.map((p: Loose) => p.name)).toEqual(
      expect.arrayContaining(['fieldValidation', 'body']),
    );
    for (const ref of refs(doc)) {
      expect(doc.definitions[ref.slice('#/definitions/'.length)], ref).toBeDefined();
    }
  });

  it('answers a protobuf-only Accept with 406 and a mixed one with JSON', async () => {
    const sim = await start();
    const pb = await get(sim, '/openapi/v2', {
      Accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf',
    });
    expect(pb.status).toBe(406);
    expect(pb.body).toMatchObject({ kind: 'Status', reason: 'NotAcceptable', code: 406 });
    const mixed = await get(sim, '/openapi/v2', {
      Accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf, application/json',
    });
    expect(mixed.status).toBe(200);
    expect(mixed.body.swagger).toBe('2.0');
  });
});
