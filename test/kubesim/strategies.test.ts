import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { silentLogger } from '../../src/log/logger.js';
import { ResourceHandlers } from '../../src/kubesim/handlers.js';
import { NamespaceLifecycle } from '../../src/kubesim/lifecycle.js';
import { objectSchema } from '../../src/kubesim/resources/meta-schema.js';
import { namespaceResource } from '../../src/kubesim/resources/namespaces.js';
import { Registry, type ResourceDef } from '../../src/kubesim/resources/registry.js';
import { Store } from '../../src/kubesim/store.js';
import { isDNS1123Subdomain } from '../../src/kubesim/validation/names.js';
import { api, useSim, type Loose } from './helpers.js';

/**
 * The three registry-strategy switches per kind, as pkg/registry/<group>/<kind>/strategy.go sets
 * them: PUT on a missing object creates it (AllowCreateOnUpdate), PUT without
 * metadata.resourceVersion is an unconditional update (AllowUnconditionalUpdate), and whether
 * metadata.generation is set and bumped on a spec change. A stale resourceVersion is 409 always.
 */

const start = useSim();

interface KindCase {
  kind: string;
  collection: string;
  /** A valid body for the object; `rev` makes a different spec (or content) per call. */
  body: (name: string, rev: number) => Record<string, unknown>;
  createOnUpdate: boolean;
  unconditionalUpdate: boolean;
  /** The resource label in error messages (`services`, `leases.coordination.k8s.io`). */
  resource: string;
}

const eventCore = (name: string, rev: number) => ({
  apiVersion: 'v1',
  kind: 'Event',
  metadata: { name },
  involvedObject: { kind: 'Service', namespace: 'default', name: 'x' },
  reason: 'Synced',
  message: `rev ${rev}`,
  type: 'Normal',
  count: rev,
});

const eventV1 = (name: string, rev: number) => ({
  apiVersion: 'events.k8s.io/v1',
  kind: 'Event',
  metadata: { name },
  eventTime: '2024-01-01T00:00:00.000000Z',
  type: 'Normal',
  reason: 'Synced',
  action: 'Sync',
  note: `rev ${rev}`,
  reportingController: 'example.com/ctl',
  reportingInstance: 'ctl-1',
});

const cases: KindCase[] = [
  {
    kind: 'Service',
    collection: '/api/v1/namespaces/default/services',
    body: (name, rev) => ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name },
      spec: { ports: [{ port: 80 + rev }] },
    }),
    createOnUpdate: true,
    unconditionalUpdate: true,
    resource: 'services',
  },
  {
    kind: 'Namespace',
    collection: '/api/v1/namespaces',
    body: (name, rev) => ({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name, labels: { rev: String(rev) } },
    }),
    createOnUpdate: false,
    unconditionalUpdate: true,
    resource: 'namespaces',
  },
  {
    kind: 'Lease',
    collection: '/apis/coordination.k8s.io/v1/namespaces/default/leases',
    body: (name, rev) => ({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name },
      spec: { holderIdentity: `holder-${rev}`, leaseDurationSeconds: 15 },
    }),
    createOnUpdate: true,
    unconditionalUpdate: false,
    resource: 'leases.coordination.k8s.io',
  },
  {
    kind: 'Event (core/v1)',
    collection: '/api/v1/namespaces/default/events',
    body: eventCore,
    createOnUpdate: true,
    unconditionalUpdate: true,
    resource: 'events',
  },
  {
    kind: 'Event (events.k8s.io/v1)',
    collection: '/apis/events.k8s.io/v1/namespaces/default/events',
    body: eventV1,
    createOnUpdate: true,
    unconditionalUpdate: true,
    resource: 'events.events.k8s.io',
  },
];

/** The body for `rev`, carrying the given (server-returned) metadata under its own. */
function withMeta(c: KindCase, name: string, rev: number, meta: Loose): Loose {
  const body: Loose = c.body(name, rev);
  return { ...body, metadata: { ...meta, ...body.metadata } };
}

describe.each(cases)('registry strategy of $kind', (c) => {
  it(`PUT to a missing object ${c.createOnUpdate ? 'creates it (201)' : 'is 404'}`, async () => {
    const sim = await start();
    const r = await api(sim, 'PUT', `${c.collection}/fresh`, c.body('fresh', 1));
    if (c.createOnUpdate) {
      expect(r.status).toBe(201);
      expect(r.body.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
      expect((await api(sim, 'GET', `${c.collection}/fresh`)).status).toBe(200);
    } else {
      expect(r.status).toBe(404);
      expect(r.body).toMatchObject({ reason: 'NotFound', message: `${c.resource} "fresh" not found` });
      expect((await api(sim, 'GET', `${c.collection}/fresh`)).status).toBe(404);
    }
  });

  it(`PUT without metadata.resourceVersion ${c.unconditionalUpdate ? 'is an unconditional update' : 'is 422'}`, async () => {
    const sim = await start();
    const created = await api(sim, 'POST', c.collection, c.body('obj', 1));
    expect(created.status).toBe(201);
    const r = await api(sim, 'PUT', `${c.collection}/obj`, c.body('obj', 2));
    if (c.unconditionalUpdate) {
      expect(r.status).toBe(200);
      expect(Number(r.body.metadata.resourceVersion)).toBeGreaterThan(
        Number(created.body.metadata.resourceVersion),
      );
    } else {
      expect(r.status).toBe(422);
      expect(r.body).toMatchObject({
        reason: 'Invalid',
        message: `${c.resource} "obj" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update`,
        details: {
          causes: [
            {
              reason: 'FieldValueInvalid',
              message: 'Invalid value: 0: must be specified for an update',
              field: 'metadata.resourceVersion',
            },
          ],
        },
      });
      const still = await api(sim, 'GET', `${c.collection}/obj`);
      expect(still.body.metadata.resourceVersion).toBe(created.body.metadata.resourceVersion);
    }
  });

  it('PUT with a stale resourceVersion is 409 Conflict', async () => {
    const sim = await start();
    const created = await api(sim, 'POST', c.collection, c.body('obj', 1));
    const first = await api(sim, 'PUT', `${c.collection}/obj`, withMeta(c, 'obj', 2, created.body.metadata));
    expect(first.status).toBe(200);
    expect(first.body.metadata.resourceVersion).not.toBe(created.body.metadata.resourceVersion);
    const stale = await api(sim, 'PUT', `${c.collection}/obj`, withMeta(c, 'obj', 3, created.body.metadata));
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({
      reason: 'Conflict',
      message: `Operation cannot be fulfilled on ${c.resource} "obj": the object has been modified; please apply your changes to the latest version and try again`,
    });
  });

  it('sets no metadata.generation, not even after a change', async () => {
    const sim = await start();
    const created = await api(sim, 'POST', c.collection, c.body('obj', 1));
    expect(created.body.metadata.generation).toBeUndefined();
    const updated = await api(
      sim,
      'PUT',
      `${c.collection}/obj`,
      withMeta(c, 'obj', 2, created.body.metadata),
    );
    expect(updated.status).toBe(200);
    expect(updated.body.metadata.resourceVersion).not.toBe(created.body.metadata.resourceVersion);
    expect(updated.body.metadata.generation).toBeUndefined();
    // A client-sent generation is not kept either.
    const sent = await api(
      sim,
      'PUT',
      `${c.collection}/obj`,
      withMeta(c, 'obj', 3, { ...updated.body.metadata, generation: 7 }),
    );
    expect(sent.status).toBe(200);
    expect(sent.body.metadata.generation).toBeUndefined();
  });
});

/**
 * No served kind tracks generation today; a Deployment-like kind (as docs/kubesim.md tells later
 * kinds to declare it) shows the handlers honour all three switches when they are the other way.
 */
describe('a kind that tracks generation and forbids create-on-update and unconditional updates', () => {
  function setup() {
    const store = new Store(100);
    const registry = new Registry();
    const namespaces = namespaceResource();
    registry.add(namespaces);
    const widgets: ResourceDef = {
      group: 'example.com',
      version: 'v1',
      kind: 'Widget',
      listKind: 'WidgetList',
      plural: 'widgets',
      singular: 'widget',
      namespaced: true,
      verbs: ['create', 'get', 'update', 'patch'],
      allowCreateOnUpdate: false,
      allowUnconditionalUpdate: false,
      returnDeletedObject: false,
      tracksGeneration: true,
      nameRule: isDNS1123Subdomain,
      schema: objectSchema({ spec: z.object({ replicas: z.number().int().optional() }).optional() }),
    };
    registry.add(widgets);
    const lifecycle = new NamespaceLifecycle(store, registry, namespaces, 10, silentLogger());
    const handlers = new ResourceHandlers(store, lifecycle, namespaces);
    handlers.create(namespaces, undefined, { value: { metadata: { name: 'default' } }, duplicates: [] }, {});
    return { handlers, widgets, lifecycle };
  }
  const body = (value: Loose) => ({ value, duplicates: [] });

  it('sets generation 1, bumps it on a spec change only, and keeps a client from setting it', () => {
    const { handlers, widgets, lifecycle } = setup();
    try {
      const created = handlers.create(
        widgets,
        'default',
        body({ metadata: { name: 'w', generation: 9 }, spec: { replicas: 1 } }),
        {},
      ).body as Loose;
      expect(created.metadata.generation).toBe(1);
      const labelled = handlers.update(
        widgets,
        'default',
        'w',
        body({ ...created, metadata: { ...created.metadata, labels: { a: 'b' } } }),
        {},
      ).body as Loose;
      expect(labelled.metadata.generation).toBe(1);
      const scaled = handlers.update(
        widgets,
        'default',
        'w',
        body({ ...labelled, metadata: { ...labelled.metadata, generation: 40 }, spec: { replicas: 3 } }),
        {},
      ).body as Loose;
      expect(scaled.metadata.generation).toBe(2);
    } finally {
      lifecycle.stop();
    }
  });

  it('PUT to a missing object is 404 and PUT without resourceVersion is 422', () => {
    const { handlers, widgets, lifecycle } = setup();
    try {
      const put = (value: Loose) => () => handlers.update(widgets, 'default', 'w', body(value), {});
      expect(put({ metadata: { name: 'w' }, spec: {} })).toThrow('widgets.example.com "w" not found');
      handlers.create(widgets, 'default', body({ metadata: { name: 'w' }, spec: {} }), {});
      expect(put({ metadata: { name: 'w' }, spec: { replicas: 2 } })).toThrow(
        'widgets.example.com "w" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update',
      );
    } finally {
      lifecycle.stop();
    }
  });
});
