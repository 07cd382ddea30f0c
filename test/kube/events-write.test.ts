import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { startKubesim, type Kubesim } from '../../src/kubesim/index.js';
import { EventRecorder, objectRef } from '../../src/kube/events/recorder.js';
import { retryOnConflict } from '../../src/kube/conflict-retry.js';
import { isAlreadyExists, isConflict, KubeApiError } from '../../src/kube/errors.js';
import { EventSchema, ListSchema, type Service } from '../../src/kube/objects.js';
import { collectionPath, kinds } from '../../src/kube/resources.js';
import { KubeTransport, type KubeRequest } from '../../src/kube/transport.js';
import { KubeClient } from '../../src/kube/write.js';
import { captureLogger, metricValue, newRegistry, service } from './helpers.js';

let sim: Kubesim;
let admin: KubeClient;
const NS = 'ev';

beforeAll(async () => {
  sim = await startKubesim({ initialNamespaces: [NS] });
  admin = new KubeClient(sim.kubeConfig());
});
afterAll(async () => {
  await sim.stop();
});
afterEach(() => sim.faults.clear());

async function eventsAbout(name: string) {
  const list = await admin.transport.json({ path: collectionPath(kinds.event, NS) }, ListSchema);
  return (list.items ?? []).map((i) => EventSchema.parse(i)).filter((e) => e.involvedObject.name === name);
}

describe('event recorder', () => {
  it('aggregates identical events into one Event with a count', async () => {
    const svc = await admin.create(kinds.service, service(NS, 'agg'));
    const registry = newRegistry();
    const rec = new EventRecorder({
      kubeConfig: sim.kubeConfig(),
      logger: captureLogger().logger,
      metrics: registry,
      instance: 'pod-1',
    });
    const ref = objectRef(svc, 'Service', 'v1');
    rec.warning(ref, 'NameConflict', 'a foreign Service is in the way');
    rec.warning(ref, 'NameConflict', 'a foreign Service is in the way');
    rec.normal(ref, 'ServiceCreated', 'created');
    await rec.flush();
    const evs = await eventsAbout('agg');
    expect(evs).toHaveLength(2);
    const conflict = evs.find((e) => e.reason === 'NameConflict');
    expect(conflict).toMatchObject({
      count: 2,
      type: 'Warning',
      source: { component: 'endpoint-binder', host: 'pod-1' },
      reportingComponent: 'endpoint-binder',
      involvedObject: { kind: 'Service', name: 'agg', namespace: NS, uid: svc.metadata.uid },
    });
    expect(conflict?.lastTimestamp).toBeTruthy();
    expect(evs.find((e) => e.reason === 'ServiceCreated')?.count).toBe(1);
    expect(await metricValue(registry, 'endpoint_binder_kube_events_total', { result: 'aggregated' })).toBe(
      1,
    );
    expect(await metricValue(registry, 'endpoint_binder_kube_events_total', { result: 'created' })).toBe(2);
  });

  it('starts a new Event when the aggregated one was deleted', async () => {
    const svc = await admin.create(kinds.service, service(NS, 'agg2'));
    const rec = new EventRecorder({
      kubeConfig: sim.kubeConfig(),
      logger: captureLogger().logger,
      metrics: newRegistry(),
    });
    rec.normal(objectRef(svc, 'Service'), 'Synced', 'ok');
    await rec.flush();
    const [first] = await eventsAbout('agg2');
    await admin.deleteIfExists(kinds.event, NS, first!.metadata.name);
    rec.normal(objectRef(svc, 'Service'), 'Synced', 'ok');
    await rec.flush();
    const evs = await eventsAbout('agg2');
    expect(evs).toHaveLength(1);
    expect(evs[0]?.metadata.name).not.toBe(first!.metadata.name);
    expect(evs[0]?.count).toBe(1);
  });

  it('filters Normal Events beyond the spam limit and never a Warning', async () => {
    const svc = await admin.create(kinds.service, service(NS, 'spam'));
    const registry = newRegistry();
    const rec = new EventRecorder({
      kubeConfig: sim.kubeConfig(),
      logger: captureLogger().logger,
      metrics: registry,
      normalRateLimit: { burst: 2, perSecond: 0.0001 },
    });
    const ref = objectRef(svc, 'Service', 'v1');
    for (let i = 0; i < 4; i++) rec.normal(ref, 'Created', `created ${i}`);
    rec.warning(ref, 'WriteFailed', 'could not write');
    rec.warning(ref, 'NameConflict', 'in the way');
    await rec.flush();
    const evs = await eventsAbout('spam');
    expect(evs.filter((e) => e.type === 'Normal').map((e) => e.message)).toEqual(['created 0', 'created 1']);
    expect(evs.filter((e) => e.type === 'Warning')).toHaveLength(2);
    expect(rec.filtered).toBe(2);
    expect(await metricValue(registry, 'endpoint_binder_kube_events_total', { result: 'filtered' })).toBe(2);
  });

  it('never blocks or throws under a failing, slow API: bounded queue, drops counted', async () => {
    sim.faults.failRequests({ status: 500, share: 1, match: { resource: 'events' } });
    sim.faults.latency(20);
    const registry = newRegistry();
    const { logger, lines } = captureLogger();
    const rec = new EventRecorder({ kubeConfig: sim.kubeConfig(), logger, metrics: registry, queueSize: 5 });
    const ref = { kind: 'Service', namespace: NS, name: 'x' };
    for (let i = 0; i < 50; i++) {
      // Synchronous, returns nothing to await.
      expect(rec.warning(ref, 'Broken', `attempt ${i}`)).toBeUndefined();
      expect(rec.pending).toBeLessThanOrEqual(5);
    }
    rec.record(ref, 'Normal', 'not camel case', 'x');
    await rec.flush();
    expect(
      await metricValue(registry, 'endpoint_binder_kube_events_total', { result: 'dropped' }),
    ).toBeGreaterThanOrEqual(44);
    expect(
      await metricValue(registry, 'endpoint_binder_kube_events_total', { result: 'failed' }),
    ).toBeGreaterThanOrEqual(1);
    expect(await metricValue(registry, 'endpoint_binder_kube_events_total', { result: 'invalid' })).toBe(1);
    expect(lines.some((l) => l['msg'] === 'event write failed')).toBe(true);
    sim.faults.clear();
    await rec.stop();
  });
});

describe('write helpers', () => {
  /** Read, merge our labels over the live ones, write with the read resourceVersion: one attempt. */
  const mergeLabels =
    (client: KubeClient, name: string, labels: Record<string, string>, onAttempt = () => undefined) =>
    async (): Promise<{ object: Service; operation: 'created' | 'updated' }> => {
      onAttempt();
      const live = await client.get(kinds.service, NS, name);
      if (!live)
        return {
          object: await client.create(kinds.service, service(NS, name, 80, labels)),
          operation: 'created',
        };
      const next: Service = {
        ...live,
        metadata: { ...live.metadata, labels: { ...live.metadata.labels, ...labels } },
      };
      return { object: await client.replace(kinds.service, next), operation: 'updated' };
    };

  it('retryOnConflict: a stale PUT gets 409 Conflict and is retried with a fresh read', async () => {
    await admin.create(kinds.service, service(NS, 'stale'));
    const other = new KubeClient(sim.kubeConfig());
    let first = true;
    // Deterministic race through a transport hook: just before our first PUT, someone else writes.
    class RacingTransport extends KubeTransport {
      override async json<S extends z.ZodType>(req: KubeRequest, schema: S): Promise<z.infer<S>> {
        if (req.method === 'PUT' && first) {
          first = false;
          await other.mergePatch(kinds.service, NS, 'stale', { metadata: { labels: { theirs: 'yes' } } });
        }
        return super.json(req, schema);
      }
    }
    const racing = new KubeClient(new RacingTransport(sim.kubeConfig()));
    let mutations = 0;
    let attempts = 0;
    const out = await retryOnConflict(
      mergeLabels(racing, 'stale', { mine: 'yes' }, () => {
        attempts++;
        mutations++;
      }),
    );
    expect(out.operation).toBe('updated');
    expect(attempts).toBe(2);
    expect(mutations).toBe(2);
    expect(out.object.metadata.labels).toMatchObject({ mine: 'yes', theirs: 'yes' });
  });

  it('retryOnConflict: an AlreadyExists race on create is retried as an update', async () => {
    const other = new KubeClient(sim.kubeConfig());
    let first = true;
    class RacingTransport extends KubeTransport {
      override async json<S extends z.ZodType>(req: KubeRequest, schema: S): Promise<z.infer<S>> {
        if (req.method === 'POST' && first) {
          first = false;
          await other.create(kinds.service, service(NS, 'race-create', 80, { theirs: 'yes' }));
        }
        return super.json(req, schema);
      }
    }
    const racing = new KubeClient(new RacingTransport(sim.kubeConfig()));
    let attempts = 0;
    const out = await retryOnConflict(
      mergeLabels(racing, 'race-create', { mine: 'yes' }, () => void attempts++),
      { alsoRetry: isAlreadyExists },
    );
    expect(out.operation).toBe('updated');
    expect(attempts).toBe(2);
    expect(out.object.metadata.labels).toMatchObject({ mine: 'yes', theirs: 'yes' });
  });

  it('gives up after bounded conflict retries with the Conflict error', async () => {
    await admin.create(kinds.service, service(NS, 'always-conflict'));
    const other = new KubeClient(sim.kubeConfig());
    class AlwaysRacing extends KubeTransport {
      override async json<S extends z.ZodType>(req: KubeRequest, schema: S): Promise<z.infer<S>> {
        if (req.method === 'PUT') {
          await other.mergePatch(kinds.service, NS, 'always-conflict', {
            metadata: { labels: { n: String(Math.random()).slice(2, 8) } },
          });
        }
        return super.json(req, schema);
      }
    }
    const racing = new KubeClient(new AlwaysRacing(sim.kubeConfig()));
    let attempts = 0;
    const err = await retryOnConflict(
      mergeLabels(racing, 'always-conflict', { mine: 'x' }, () => void attempts++),
      { attempts: 3 },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeApiError);
    expect(isConflict(err)).toBe(true);
    expect(attempts).toBe(3);
  });

  it('mergePatch sends a merge patch (null removes a key); deleteIfExists treats 404 as success', async () => {
    await admin.create(kinds.service, service(NS, 'mp', 80, { a: '1', b: '2' }));
    const patched = await admin.mergePatch(kinds.service, NS, 'mp', {
      metadata: { labels: { a: null, c: '3' } },
    });
    expect(patched.metadata.labels).toEqual({ test: 'kube', b: '2', c: '3' });
    expect(await admin.deleteIfExists(kinds.service, NS, 'mp')).toBe(true);
    expect(await admin.deleteIfExists(kinds.service, NS, 'mp')).toBe(false);
    expect(await admin.get(kinds.service, NS, 'mp')).toBeUndefined();
  });

  it('parses API error bodies into KubeApiError', async () => {
    const err = await admin
      .create(kinds.service, { metadata: { name: 'Bad_Name', namespace: NS }, spec: { ports: [] } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeApiError);
    const e = err as KubeApiError;
    expect(e.code).toBe(422);
    expect(e.reason).toBe('Invalid');
    expect(e.causes.length).toBeGreaterThan(0);
    const unauth = new KubeClient(sim.kubeConfig('not-a-token'));
    const e401 = await unauth.get(kinds.service, NS, 'x').catch((x: unknown) => x);
    expect(e401).toMatchObject({ code: 401 });
  });
});
