import { describe, expect, it } from 'vitest';
import {
  applyJitter,
  baseDelay,
  initialBackoffState,
  nextBackoff,
  randomInRange,
  type BackoffOptions,
} from '../../src/time/backoff.js';
import { changed, diffRelist, Store } from '../../src/kube/cache/store.js';
import {
  AggregationCache,
  aggregationKey,
  eventName,
  eventNamespace,
  isValidReason,
  truncateMessage,
  type EventInput,
} from '../../src/kube/events/aggregate.js';
import {
  claimRecord,
  decide,
  microTime,
  observe,
  releaseRecord,
  toLeaseSeconds,
  type LeaderElectionRecord,
} from '../../src/kube/leader/record.js';
import {
  classifyError,
  errorFromResponse,
  isAlreadyExists,
  isConflict,
  toKubeApiError,
} from '../../src/kube/errors.js';
import { ApiException } from '@kubernetes/client-node';
import { collectionPath, kinds, objectPath } from '../../src/kube/resources.js';
import { ServiceSchema, type KubeObject } from '../../src/kube/objects.js';

const bo: BackoffOptions = { initialMs: 100, maxMs: 1000, jitter: 0.5, resetAfterMs: 5000 };

describe('backoff', () => {
  it('doubles up to the cap', () => {
    expect([0, 1, 2, 3, 4, 5].map((n) => baseDelay(n, bo))).toEqual([100, 200, 400, 800, 1000, 1000]);
  });
  it('jitter only shortens, within the configured share', () => {
    expect(applyJitter(1000, 0.5, 0)).toBe(1000);
    expect(applyJitter(1000, 0.5, 0.999)).toBeGreaterThanOrEqual(500);
    expect(applyJitter(1000, 0.5, 0.5)).toBe(750);
  });
  it('grows per consecutive failure and resets after a quiet period', () => {
    let s = initialBackoffState;
    const delays: number[] = [];
    for (let i = 0; i < 4; i++) {
      const r = nextBackoff(s, 1000 + i, 0, bo);
      delays.push(r.delayMs);
      s = r.state;
    }
    expect(delays).toEqual([100, 200, 400, 800]);
    const later = nextBackoff(s, 1003 + bo.resetAfterMs + 1, 0, bo);
    expect(later.delayMs).toBe(100);
  });
  it('honours Retry-After as a floor, bounded', () => {
    expect(nextBackoff(initialBackoffState, 0, 0, bo, 3000).delayMs).toBe(3000);
    expect(nextBackoff(initialBackoffState, 0, 0, bo, 10).delayMs).toBe(100);
    expect(nextBackoff(initialBackoffState, 0, 0, { ...bo, maxRetryAfterMs: 2000 }, 9000).delayMs).toBe(2000);
  });
  it('randomInRange spans the range', () => {
    expect(randomInRange(300, 600, 0)).toBe(300);
    expect(randomInRange(300, 600, 0.5)).toBe(450);
    expect(randomInRange(5, 5, 0.9)).toBe(5);
  });
});

const obj = (name: string, rv: string, ns = 'ns'): KubeObject => ({
  metadata: { name, namespace: ns, resourceVersion: rv },
});

describe('store and relist diff', () => {
  it('emits adds, updates (only when the RV changed) and deletes', () => {
    const store = new Store<KubeObject>();
    store.upsert(obj('keep', '1'));
    store.upsert(obj('change', '2'));
    store.upsert(obj('gone', '3'));
    const d = diffRelist(store.snapshot(), [obj('keep', '1'), obj('change', '20'), obj('new', '21')]);
    expect(d.adds.map((o) => o.metadata.name)).toEqual(['new']);
    expect(d.updates.map((u) => [u.old.metadata.resourceVersion, u.new.metadata.resourceVersion])).toEqual([
      ['2', '20'],
    ]);
    expect(d.deletes.map((o) => o.metadata.name)).toEqual(['gone']);
  });
  it('treats RVs as opaque strings (no ordering)', () => {
    expect(changed(obj('a', '10'), obj('a', '9'))).toBe(true);
    expect(changed(obj('a', 'abc'), obj('a', 'abc'))).toBe(false);
  });
  it('keys namespaced and cluster-scoped objects apart', () => {
    const s = new Store<KubeObject>();
    s.upsert(obj('x', '1', 'a'));
    s.upsert({ metadata: { name: 'x', resourceVersion: '2' } });
    expect(s.get('a', 'x')?.metadata.resourceVersion).toBe('1');
    expect(s.get(undefined, 'x')?.metadata.resourceVersion).toBe('2');
    expect(s.size).toBe(2);
  });
});

const rec = (holder: string, renew: string, transitions = 0, secs = 15): LeaderElectionRecord => ({
  holderIdentity: holder,
  leaseDurationSeconds: secs,
  acquireTime: 'a',
  renewTime: renew,
  leaseTransitions: transitions,
});

describe('leader election decisions', () => {
  it('follows an unexpired foreign lease, measured from local observation time', () => {
    const o = observe(undefined, rec('other', 't1'), 1_000);
    expect(decide(o, 'me', 1_000 + 14_999, 15_000)).toMatchObject({ action: 'follow', holder: 'other' });
    expect(decide(o, 'me', 1_000 + 15_000, 15_000)).toMatchObject({ action: 'acquire' });
  });
  it('restarts the expiry clock when the record changes, not when it is merely re-read', () => {
    let o = observe(undefined, rec('other', 't1'), 0);
    o = observe(o, rec('other', 't1'), 10_000);
    expect(o.observedAt).toBe(0);
    o = observe(o, rec('other', 't2'), 12_000);
    expect(o.observedAt).toBe(12_000);
    expect(decide(o, 'me', 20_000, 15_000).action).toBe('follow');
  });
  it('ignores the server renewTime (clock skew does not matter)', () => {
    // renewTime far in the past by the server's clock, but we only just saw the record.
    const o = observe(undefined, rec('other', '1970-01-01T00:00:00.000000Z'), 50_000);
    expect(decide(o, 'me', 50_001, 15_000).action).toBe('follow');
  });
  it('acquires an empty (released) lease at once and counts a transition', () => {
    const o = observe(undefined, releaseRecord(rec('old', 't', 3), 0), 100);
    const d = decide(o, 'me', 101, 15_000);
    expect(d.action).toBe('acquire');
    if (d.action !== 'follow') {
      expect(d.record.holderIdentity).toBe('me');
      expect(d.record.leaseTransitions).toBe(4);
      expect(d.record.acquireTime).toBe(microTime(101));
    }
  });
  it('renews its own lease keeping acquireTime and transitions', () => {
    const mine = { ...rec('me', 't', 2), acquireTime: 'first' };
    const d = decide(observe(undefined, mine, 0), 'me', 5_000, 15_000);
    expect(d.action).toBe('renew');
    if (d.action !== 'follow') {
      expect(d.record.acquireTime).toBe('first');
      expect(d.record.leaseTransitions).toBe(2);
      expect(d.record.renewTime).toBe(microTime(5_000));
    }
  });
  it('creates with zero transitions, whole seconds, MicroTime format', () => {
    const r = claimRecord(undefined, 'me', Date.UTC(2026, 0, 2, 3, 4, 5, 678), 1_500);
    expect(r).toMatchObject({ leaseTransitions: 0, leaseDurationSeconds: 2, holderIdentity: 'me' });
    expect(r.renewTime).toBe('2026-01-02T03:04:05.678000Z');
    expect(toLeaseSeconds(100)).toBe(1);
  });
  it('release clears the holder with a 1 s duration', () => {
    expect(releaseRecord(rec('me', 't', 7), 0)).toMatchObject({
      holderIdentity: '',
      leaseDurationSeconds: 1,
      leaseTransitions: 7,
    });
  });
});

describe('event aggregation', () => {
  const ev = (message: string): EventInput => ({
    involvedObject: { kind: 'Service', namespace: 'ns', name: 'svc', uid: 'u1' },
    type: 'Warning',
    reason: 'NameConflict',
    message,
  });
  it('keys on object, type, reason and message', () => {
    expect(aggregationKey(ev('a'), 'c')).toBe(aggregationKey(ev('a'), 'c'));
    expect(aggregationKey(ev('a'), 'c')).not.toBe(aggregationKey(ev('b'), 'c'));
    expect(aggregationKey({ ...ev('a'), type: 'Normal' }, 'c')).not.toBe(aggregationKey(ev('a'), 'c'));
  });
  it('reuses an entry within the window only, and stays bounded', () => {
    const c = new AggregationCache(1000, 2);
    c.remember('k', { namespace: 'ns', name: 'e', count: 1, firstTimestamp: 't', lastSeenAt: 0 });
    expect(c.lookup('k', 1000)).toBeDefined();
    expect(c.lookup('k', 1001)).toBeUndefined();
    for (const k of ['a', 'b', 'c'])
      c.remember(k, { namespace: 'ns', name: k, count: 1, firstTimestamp: 't', lastSeenAt: 0 });
    expect(c.size).toBe(2);
    expect(c.lookup('a', 0)).toBeUndefined();
  });
  it('validates reasons and bounds names and messages', () => {
    expect(isValidReason('ServiceCreated')).toBe(true);
    expect(isValidReason('service created')).toBe(false);
    expect(isValidReason('serviceCreated')).toBe(false);
    expect(eventName('x'.repeat(300), 1, 0).length).toBeLessThanOrEqual(253);
    expect(eventName('svc', 1, 0)).toMatch(/^svc\.[0-9a-f]+$/);
    expect(truncateMessage('m'.repeat(2000)).length).toBe(1024);
    expect(eventNamespace({ kind: 'Namespace', name: 'x' })).toBe('default');
  });
});

describe('errors', () => {
  it('parses a Status body into a typed error', () => {
    const e = errorFromResponse(
      409,
      JSON.stringify({
        kind: 'Status',
        status: 'Failure',
        reason: 'AlreadyExists',
        message: 'services "a" already exists',
        code: 409,
        details: { causes: [{ field: 'metadata.name', message: 'dup' }] },
      }),
    );
    expect(e).toMatchObject({ code: 409, reason: 'AlreadyExists', message: 'services "a" already exists' });
    expect(e.causes).toEqual([{ field: 'metadata.name', message: 'dup' }]);
    expect(isAlreadyExists(e)).toBe(true);
    expect(isConflict(e)).toBe(false);
  });
  it('survives non-JSON bodies and reads Retry-After', () => {
    const e = errorFromResponse(429, 'slow down', '7');
    expect(e).toMatchObject({ code: 429, reason: 'TooManyRequests', retryAfterSeconds: 7 });
    expect(classifyError(e)).toBe('throttled');
    expect(errorFromResponse(401, '').reason).toBe('Unauthorized');
  });
  it("converts client-node's ApiException (raw body text)", () => {
    const ex = new ApiException<string>(
      409,
      'conflict',
      JSON.stringify({
        kind: 'Status',
        reason: 'Conflict',
        message: 'the object has been modified',
        code: 409,
      }),
      {},
    );
    const e = toKubeApiError(ex);
    expect(e?.reason).toBe('Conflict');
    expect(isConflict(ex)).toBe(true);
  });
  it('classifies network errors', () => {
    const err = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    expect(classifyError(err)).toBe('network');
  });
});

describe('resources and schemas', () => {
  it('builds core and group paths', () => {
    expect(collectionPath(kinds.service)).toBe('/api/v1/services');
    expect(collectionPath(kinds.service, 'ns')).toBe('/api/v1/namespaces/ns/services');
    expect(objectPath(kinds.lease, 'ns', 'l')).toBe('/apis/coordination.k8s.io/v1/namespaces/ns/leases/l');
    expect(objectPath(kinds.namespace, undefined, 'ns')).toBe('/api/v1/namespaces/ns');
    expect(() => objectPath(kinds.service, undefined, 'x')).toThrow();
  });
  it('keeps unknown fields', () => {
    const s = ServiceSchema.parse({
      metadata: { name: 'a', extra: 1 },
      spec: { ports: [], sessionAffinity: 'None' },
      status: {},
    });
    expect(s).toMatchObject({ metadata: { extra: 1 }, spec: { sessionAffinity: 'None' }, status: {} });
  });
});
