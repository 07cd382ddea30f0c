import { describe, expect, it } from 'vitest';
import {
  planRollout,
  resolveFenceposts,
  scaledValue,
  type PlanInput,
  type PlanPod,
} from '../../src/kubesim/workloads/rollout.js';
import { templateHash } from '../../src/kubesim/workloads/pod-template.js';

const pod = (
  name: string,
  state: 'available' | 'ready' | 'unready' = 'available',
  createdMs = 0,
): PlanPod => ({
  name,
  ready: state !== 'unready',
  available: state === 'available',
  ...(state !== 'unready' ? { readySinceMs: createdMs } : {}),
  creationMs: createdMs,
});

const base: Omit<PlanInput, 'newPods' | 'oldPods'> = {
  replicas: 2,
  strategy: 'RollingUpdate',
  maxSurge: 1,
  maxUnavailable: 0,
  terminating: 0,
};

describe('deployment rollout plan', () => {
  it.each([
    // value, total, roundUp, expected
    [1, 10, true, 1],
    ['25%', 2, true, 1],
    ['25%', 2, false, 0],
    ['25%', 10, true, 3],
    ['25%', 10, false, 2],
    ['100%', 3, false, 3],
    ['0%', 5, true, 0],
    ['x%', 5, true, undefined],
  ] as const)('scales %s of %d (round up %s) to %s', (value, total, up, expected) => {
    expect(scaledValue(value, total, up)).toBe(expected);
  });

  it('resolves fenceposts: surge up, unavailable down, both zero becomes unavailable 1', () => {
    expect(resolveFenceposts('25%', '25%', 2)).toEqual({ maxSurge: 1, maxUnavailable: 0 });
    expect(resolveFenceposts('25%', '25%', 4)).toEqual({ maxSurge: 1, maxUnavailable: 1 });
    expect(resolveFenceposts(0, 0, 3)).toEqual({ maxSurge: 0, maxUnavailable: 1 });
    expect(resolveFenceposts('10%', '10%', 1)).toEqual({ maxSurge: 1, maxUnavailable: 0 });
  });

  it.each<[string, Partial<PlanInput>, { create: number; delete: string[] }]>([
    ['scale up from nothing', { newPods: [], oldPods: [] }, { create: 2, delete: [] }],
    ['steady state', { newPods: [pod('a'), pod('b')], oldPods: [] }, { create: 0, delete: [] }],
    [
      'scale down deletes the unready pod first, then the newest',
      {
        replicas: 1,
        newPods: [pod('a', 'available', 1), pod('b', 'unready', 2), pod('c', 'available', 3)],
        oldPods: [],
      },
      { create: 0, delete: ['b', 'c'] },
    ],
    [
      'roll starts with the surge pod',
      { newPods: [], oldPods: [pod('o1'), pod('o2')] },
      { create: 1, delete: [] },
    ],
    [
      'maxUnavailable 0: no old pod goes while the new one is not available',
      { newPods: [pod('n1', 'unready')], oldPods: [pod('o1'), pod('o2')] },
      { create: 0, delete: [] },
    ],
    [
      'ready but within minReadySeconds is not available: still nothing goes',
      { newPods: [pod('n1', 'ready')], oldPods: [pod('o1'), pod('o2')] },
      { create: 0, delete: [] },
    ],
    [
      'new pod available: one old pod goes',
      { newPods: [pod('n1')], oldPods: [pod('o1', 'available', 1), pod('o2', 'available', 2)] },
      { create: 0, delete: ['o2'] },
    ],
    [
      'after one old pod went, the next surge pod',
      { newPods: [pod('n1')], oldPods: [pod('o1')] },
      { create: 1, delete: [] },
    ],
    [
      'unavailable old pods are cleaned up first',
      { newPods: [pod('n1')], oldPods: [pod('o1'), pod('o2', 'unready')] },
      { create: 0, delete: ['o2'] },
    ],
    [
      'maxUnavailable 1, maxSurge 0: an old pod goes before any new one starts',
      {
        maxSurge: 0,
        maxUnavailable: 1,
        newPods: [],
        oldPods: [pod('o1', 'available', 1), pod('o2', 'available', 2)],
      },
      { create: 0, delete: ['o2'] },
    ],
    [
      'maxUnavailable 1, maxSurge 0, one old gone: the new pod',
      { maxSurge: 0, maxUnavailable: 1, newPods: [], oldPods: [pod('o1')] },
      { create: 1, delete: [] },
    ],
    [
      'Recreate deletes every old pod first',
      { strategy: 'Recreate', newPods: [], oldPods: [pod('o1'), pod('o2')] },
      { create: 0, delete: ['o1', 'o2'] },
    ],
    [
      'Recreate waits for terminating pods',
      { strategy: 'Recreate', newPods: [], oldPods: [], terminating: 2 },
      { create: 0, delete: [] },
    ],
  ])('%s', (_name, over, expected) => {
    const step = planRollout({ ...base, newPods: [], oldPods: [], ...over });
    expect({ create: step.create, delete: [...step.delete].sort() }).toEqual({
      create: expected.create,
      delete: [...expected.delete].sort(),
    });
  });

  it('a template change gives another hash; key order does not', () => {
    const t = { metadata: { labels: { a: '1' } }, spec: { containers: [{ name: 'c', image: 'x' }] } };
    const reordered = { spec: { containers: [{ image: 'x', name: 'c' }] }, metadata: { labels: { a: '1' } } };
    const restarted = {
      ...t,
      metadata: {
        ...t.metadata,
        annotations: { 'kubectl.kubernetes.io/restartedAt': '2026-01-01T00:00:00Z' },
      },
    };
    expect(templateHash(t)).toBe(templateHash(reordered));
    expect(templateHash(t)).not.toBe(templateHash(restarted));
    expect(templateHash(t)).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]+$/);
  });
});
