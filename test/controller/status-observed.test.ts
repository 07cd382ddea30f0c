import { budget } from '../helpers/budget.js';
import { afterEach, describe, expect, it } from 'vitest';
import { ROLE_INTERNAL, ROLE_LABEL } from '../../src/binding/identity.js';
import type { EndpointStatus } from '../../src/binding/types.js';
import {
  ObservedView,
  observedStatuses,
  differingFields,
} from '../../src/controller/decide/status-observed.js';
import { leadership } from '../../src/controller/decide/status-leader.js';
import type { Service } from '../../src/kube/index.js';
import { OPERATOR_NS, eventually, startEnv, type ControllerEnv } from './env.js';

function svc(ns: string, name: string, targetPort = 10000): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { namespace: ns, name, labels: { [ROLE_LABEL]: ROLE_INTERNAL } },
    spec: { type: 'ClusterIP', ports: [{ name: 'p', port: 80, targetPort, protocol: 'TCP' }] },
  };
}

const planned: EndpointStatus = {
  id: 'ep_1',
  url: 'http://api.prod',
  state: 'projected',
  reason: '',
  internalService: { namespace: 'ops', name: 'ep-1' },
  aliasService: { namespace: 'prod', name: 'api' },
};

describe('observed status (pure)', () => {
  const desired = new Map([
    ['ops/ep-1', svc('ops', 'ep-1')],
    ['prod/api', svc('prod', 'api')],
  ]);

  it('is deleting, naming the finalizer, while a wanted Service is held by one', () => {
    const held = (r: { namespace: string; name: string }) => {
      const s = desired.get(`${r.namespace}/${r.name}`)!;
      if (r.name !== 'api') return s;
      return {
        ...s,
        metadata: { ...s.metadata, deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: ['x.io/hold'] },
      };
    };
    expect(observedStatuses([planned], desired, held)[0]).toMatchObject({
      state: 'deleting',
      reason: 'alias prod/api being deleted since 2026-01-01T00:00:00Z, held by finalizer x.io/hold',
    });
  });

  it('is projected only when both Services are observed as desired', () => {
    const all = (r: { namespace: string; name: string }) => desired.get(`${r.namespace}/${r.name}`);
    expect(observedStatuses([planned], desired, all)[0]).toMatchObject({ state: 'projected', reason: '' });
  });

  it('is pending with what is missing until then', () => {
    const onlyInternal = (r: { namespace: string; name: string }) =>
      r.namespace === 'ops' ? desired.get('ops/ep-1') : undefined;
    expect(observedStatuses([planned], desired, onlyInternal)[0]).toMatchObject({
      state: 'pending',
      reason: 'alias not yet written',
    });
    const stale = (r: { namespace: string; name: string }) =>
      r.namespace === 'ops' ? svc('ops', 'ep-1', 10001) : desired.get('prod/api');
    expect(observedStatuses([planned], desired, stale)[0]).toMatchObject({
      state: 'pending',
      reason: 'internal Service differs: targetPort',
    });
    expect(observedStatuses([planned], desired, () => undefined)[0]!.reason).toBe(
      'internal Service not yet written; alias not yet written',
    );
  });

  it('kept current per Service event: only the endpoints naming a changed Service are recomputed', () => {
    const other: EndpointStatus = {
      ...planned,
      id: 'ep_2',
      url: 'http://web.prod',
      internalService: { namespace: 'ops', name: 'ep-2' },
      aliasService: { namespace: 'prod', name: 'web' },
    };
    const want = new Map([...desired, ['ops/ep-2', svc('ops', 'ep-2')], ['prod/web', svc('prod', 'web')]]);
    const cluster = new Map<string, Service>([['ops/ep-1', want.get('ops/ep-1')!]]);
    const view = new ObservedView((r) => cluster.get(`${r.namespace}/${r.name}`));
    const statuses = [planned, other];
    const first = view.current(statuses, want);
    expect(first.map((s) => s.state)).toEqual(['pending', 'pending']);
    // Nothing changed: the same answer, not a recomputation.
    expect(view.current(statuses, want)).toBe(first);
    cluster.set('prod/api', want.get('prod/api')!);
    cluster.set('ops/ep-2', want.get('ops/ep-2')!);
    view.serviceChanged('prod/api');
    const second = view.current(statuses, want);
    expect(second).not.toBe(first);
    expect(second[0]).toMatchObject({ state: 'projected' });
    // ep-2's Service arrived but no event said so: its status is what the last event left.
    expect(second[1]).toBe(first[1]);
    view.serviceChanged('ops/ep-2');
    expect(view.current(statuses, want)[1]).toMatchObject({
      state: 'pending',
      reason: 'alias not yet written',
    });
    // A new pass (new statuses) recomputes everything.
    cluster.set('prod/web', want.get('prod/web')!);
    expect(view.current([planned, other], want).map((s) => s.state)).toEqual(['projected', 'projected']);
  });

  it('reports decided states (errors, conflicts) as planned', () => {
    const conflict: EndpointStatus = { ...planned, state: 'name-conflict', reason: 'held by another' };
    expect(observedStatuses([conflict], desired, () => undefined)[0]).toEqual(conflict);
  });

  it("unproven is the leader's word: a follower says pending meanwhile (issue #30 item 5)", () => {
    const unproven: EndpointStatus = { ...planned, state: 'unproven', reason: 'Service ops/ep-1 carries …' };
    expect(observedStatuses([unproven], desired, () => undefined)[0]).toEqual(unproven);
    expect(observedStatuses([unproven], desired, () => undefined, false)[0]).toMatchObject({
      state: 'pending',
      reason: 'waiting for the leader to record its internal Service (Service ops/ep-1 carries …)',
    });
  });

  it('names the differing fields', () => {
    const live = svc('ops', 'ep-1', 10001);
    live.spec!.type = 'ExternalName';
    expect(differingFields(svc('ops', 'ep-1'), live)).toEqual(['type', 'targetPort']);
  });
});

describe('leadership (pure)', () => {
  const base = {
    enabled: true,
    identity: 'me',
    leading: false,
    lease: undefined,
    lastError: undefined,
    namespace: 'ops',
    leaseName: 'eb-controller',
    namespaceExists: true,
    nowMs: Date.parse('2026-01-01T00:10:00Z'),
  };

  it('names the holder and since when; a follower of a live leader has no complaint', () => {
    const v = leadership({
      ...base,
      lease: {
        holder: 'other',
        acquireTime: '2026-01-01T00:00:00.000000Z',
        renewTime: '2026-01-01T00:09:59.000000Z',
        leaseDurationSeconds: 15,
      },
    });
    expect(v).toEqual({ holder: 'other', since: '2026-01-01T00:00:00.000000Z', cannotLead: [] });
  });

  it('says why it cannot lead: namespace missing, Lease forbidden, Lease held too long by another', () => {
    expect(leadership({ ...base, namespaceExists: false }).cannotLead[0]).toContain(
      'operator namespace ops does not exist',
    );
    expect(
      leadership({ ...base, lastError: { errorKind: 'auth', code: 403, err: 'forbidden' } }).cannotLead[0],
    ).toContain('may not be read or written (HTTP 403)');
    const stuck = leadership({
      ...base,
      lease: {
        holder: 'other',
        acquireTime: undefined,
        renewTime: '2026-01-01T00:00:00.000000Z',
        leaseDurationSeconds: 15,
      },
    });
    expect(stuck.cannotLead[0]).toContain('held by other, not renewed for 600s');
  });
});

describe('observed status against kubesim', () => {
  let env: ControllerEnv | undefined;
  afterEach(async () => {
    await env?.close();
    env = undefined;
  });

  it(
    'a controller whose operator namespace is missing is not ready and says why in /readyz and /status',
    async () => {
      env = await startEnv();
      await env.createEndpoint('http://api.prod');
      const c = await env.startController({ operatorNamespace: 'no-such-ns' });
      const readyz = await eventually(async () => {
        const res = await fetch(`${c.url}/readyz`);
        const body = (await res.json()) as { ready: boolean; reasons: string[] };
        return body.reasons.some((r) => r.includes('operator namespace no-such-ns does not exist'))
          ? body
          : undefined;
      }, 'the reason in /readyz');
      expect(readyz.ready).toBe(false);
      const status = c.status();
      expect(status.ready).toBe(false);
      expect(status.leader).toBe(false);
      expect(status.leadership?.cannotLead.join()).toContain('operator namespace no-such-ns does not exist');
      expect(status.counts['projected'] ?? 0).toBe(0);
      expect(OPERATOR_NS).not.toBe('no-such-ns');
    },
    budget(60_000),
  );
});
