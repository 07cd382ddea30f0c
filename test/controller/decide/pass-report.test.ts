import { describe, expect, it } from 'vitest';
import { ENDPOINT_ID_ANNOTATION, ROLE_LABEL } from '../../../src/binding/identity.js';
import type { DesiredState, EndpointStatus, PlanAction } from '../../../src/binding/types.js';
import type { ApplyOutcome } from '../../../src/controller/decide/outcome.js';
import {
  eventsSettled,
  leaderEvents,
  outcomesRecorded,
  passReported,
  reportedEventsRead,
  statusesReported,
} from '../../../src/controller/decide/pass-report.js';
import { initialMemory, type ReconcilerMemory } from '../../../src/controller/decide/reconciler-memory.js';
import type { Service } from '../../../src/kube/objects.js';

const m0 = initialMemory();
const KEY = 'ops/ep-a';

/** The internal Service of endpoint ep_a, as the plan wants it or (with uid and rv) as the server holds it. */
function internalService(server?: { uid: string; rv: string }): Service {
  return {
    metadata: {
      name: 'ep-a',
      namespace: 'ops',
      labels: { [ROLE_LABEL]: 'internal' },
      annotations: { [ENDPOINT_ID_ANNOTATION]: 'ep_a' },
      ...(server ? { uid: server.uid, resourceVersion: server.rv } : {}),
    },
    spec: { type: 'ClusterIP', ports: [{ port: 80, protocol: 'TCP', targetPort: 10000 }] },
  };
}
const wanted = internalService();
const stored = internalService({ uid: 'u1', rv: '5' });
const createA: PlanAction = { op: 'create', key: KEY, desired: wanted };
const deleteA: PlanAction = { op: 'delete', key: KEY, live: stored };

type Row = {
  name: string;
  outcome: ApplyOutcome;
  memory?: Partial<ReconcilerMemory>;
  readModel: string[];
  queue: string[];
  logs: string[];
  events: string[];
  uid: string | undefined;
  failing: boolean;
};

const failed = { message: 'forbidden', resting: true };
const rows: Row[] = [
  {
    name: 'created',
    outcome: { key: KEY, action: createA, result: 'created', object: stored },
    memory: { failures: new Map([[KEY, failed]]) },
    readModel: ['write'],
    queue: ['forget retry:ops/ep-a'],
    logs: ['service created'],
    events: ['Created'],
    uid: 'u1',
    failing: false,
  },
  {
    name: 'created again what this process last wrote (someone deleted it)',
    outcome: { key: KEY, action: createA, result: 'created', object: stored },
    memory: { lastWritten: new Map([[KEY, wanted]]) },
    readModel: ['write'],
    queue: [],
    logs: ['service repaired'],
    events: ['Repaired'],
    uid: 'u1',
    failing: false,
  },
  {
    name: 'deleted',
    outcome: { key: KEY, action: deleteA, result: 'deleted', deleted: stored },
    readModel: ['delete'],
    queue: [],
    logs: ['service deleted'],
    events: ['Deleted'],
    uid: 'u1',
    failing: false,
  },
  {
    name: 'foreign',
    outcome: { key: KEY, action: createA, result: 'foreign' },
    memory: { writtenUids: new Map([[KEY, 'u0']]) },
    readModel: ['foreign'],
    queue: ['addRateLimited read:ops/ep-a'],
    logs: ['service name held by a Service this install does not own; left untouched'],
    events: [],
    uid: undefined,
    failing: false,
  },
  {
    name: 'failed',
    outcome: {
      key: KEY,
      action: createA,
      result: 'failed',
      message: 'forbidden',
      error: new Error('forbidden'),
    },
    readModel: ['forget'],
    queue: ['addRateLimited retry:ops/ep-a'],
    logs: [],
    events: ['WriteFailed'],
    uid: undefined,
    failing: true,
  },
  {
    name: 'a delete that met another uid (conflict)',
    outcome: { key: KEY, action: deleteA, result: 'conflict', message: 'uid precondition' },
    readModel: ['forget'],
    queue: [],
    logs: [],
    events: [],
    uid: undefined,
    failing: false,
  },
  {
    name: 'skipped (not leading at the write)',
    outcome: { key: KEY, action: createA, result: 'skipped' },
    readModel: [],
    queue: [],
    logs: [],
    events: [],
    uid: undefined,
    failing: false,
  },
];

describe('decide/pass-report: what a pass records and reports', () => {
  it.each(rows)('outcomesRecorded: $name', (row) => {
    const before: ReconcilerMemory = { ...m0, ...row.memory };
    const step = outcomesRecorded(before, [row.outcome]);
    expect(step.readModel.map((o) => o.op)).toEqual(row.readModel);
    expect(step.queue.map((o) => (o.op === 'requestPass' ? o.op : `${o.op} ${o.item}`))).toEqual(row.queue);
    expect(step.log.map((l) => l.msg)).toEqual(row.logs);
    expect(step.events.map((e) => e.reason)).toEqual(row.events);
    expect(step.memory.writtenUids.get(KEY)).toBe(row.uid);
    expect(step.memory.failures.has(KEY)).toBe(row.failing);
    // The value handed in is not changed.
    expect(before.writtenUids).toBe(row.memory?.writtenUids ?? m0.writtenUids);
  });

  it('a failed write carries its log line with the backoff, for the runner to write with the delay', () => {
    const step = outcomesRecorded(m0, [
      { key: KEY, action: createA, result: 'failed', message: 'forbidden', error: new Error('forbidden') },
    ]);
    expect(step.queue[0]).toEqual({
      op: 'addRateLimited',
      item: 'retry:ops/ep-a',
      log: {
        level: 'warn',
        fields: { service: KEY, op: 'create', error: 'forbidden' },
        msg: 'service write failed',
        requeues: true,
      },
    });
  });

  it('a deleted Service stays trusted by its uid while kept (a finalizer holds it)', () => {
    const step = outcomesRecorded(m0, [{ key: KEY, action: deleteA, result: 'deleted', deleted: stored }]);
    expect(step.memory.deletedKept.has(KEY)).toBe(true);
    expect(step.memory.lastWritten.has(KEY)).toBe(false);
  });

  it('no outcomes: the same memory and nothing to do', () => {
    expect(outcomesRecorded(m0, [])).toEqual({ memory: m0, queue: [], events: [], log: [], readModel: [] });
  });

  const status = (state: EndpointStatus['state'], reason = ''): EndpointStatus => ({
    id: 'ep_a',
    url: 'http://api.prod',
    state,
    reason,
    internalService: { namespace: 'ops', name: 'ep-a' },
  });
  const desired = (ports: [string, number][]): DesiredState => ({
    services: new Map([[KEY, wanted]]),
    statuses: [status('projected')],
    ports: new Map(ports),
    repairs: [],
  });

  it('statusesReported: a failing Service shows `error`, the change is logged once, a port that went away is reserved', () => {
    const failing: ReconcilerMemory = {
      ...m0,
      failures: new Map([[KEY, failed]]),
      portHints: new Map([['http://old.prod', 10001]]),
    };
    const p = { outcomes: [], takenAt: 1_000, portReservationMs: 60_000, recordCapacity: 20_000 };
    const first = statusesReported(failing, { ...p, desired: desired([['http://api.prod', 10000]]) });
    expect(first.statuses[0]).toMatchObject({
      state: 'error',
      reason: 'writing its Services failed: forbidden',
    });
    expect(first.log.map((l) => [l.msg, l.fields['state'], l.fields['previous']])).toEqual([
      ['endpoint state', 'error', null],
    ]);
    expect(first.memory.reservations.get('http://old.prod')).toEqual({ port: 10001, until: 61_000 });
    expect(first.memory.portHints.get('http://api.prod')).toBe(10000);
    const again = statusesReported(first.memory, { ...p, desired: desired([['http://api.prod', 10000]]) });
    expect(again.log).toEqual([]);
  });

  it('leaderEvents: a follower sends none and forgets the term; a leader checks its reports until one over a complete listing settles the term', () => {
    const p = (state: EndpointStatus['state'], leader: boolean) => ({
      leader,
      statuses: [status(state, state === 'projected' ? '' : 'why')],
      services: new Map([[KEY, stored]]),
    });
    const follower = leaderEvents(
      { ...m0, eventsSettled: true, reportedEvents: new Set(['x']) },
      p('name-conflict', false),
    );
    expect(follower).toEqual({
      memory: { ...m0, eventStates: undefined, eventsSettled: false, reportedEvents: undefined },
      events: [],
      check: false,
    });
    // First report as leader: the Warning is checked against the cluster before it is sent.
    const first = leaderEvents(m0, p('name-conflict', true));
    expect(first.events.map((e) => e.reason)).toEqual(['NameConflict']);
    expect(first.check).toBe(true);
    const read = reportedEventsRead(first.memory, new Set());
    // Over a listing that is not complete yet: the next report is still checked.
    const partial = eventsSettled(read, { leader: true, complete: false });
    expect(leaderEvents(partial, p('projected', true)).check).toBe(true);
    // Complete: settled; the Events read are dropped, later reports are sent unchecked.
    const settled = eventsSettled(read, { leader: true, complete: true });
    expect(settled).toMatchObject({ eventsSettled: true, reportedEvents: undefined });
    const later = leaderEvents(settled, p('projected', true));
    expect(later.events.map((e) => e.reason)).toEqual(['Projected']);
    expect(later.check).toBe(false);
  });

  it.each([
    {
      name: 'writes over an incomplete listing',
      complete: false,
      results: ['created'],
      pass: true,
      caughtUp: false,
      all: true,
      lines: 1,
    },
    {
      name: 'the first complete listing, nothing to do',
      complete: true,
      results: [],
      pass: false,
      caughtUp: true,
      all: true,
      lines: 1,
    },
    {
      name: 'a failed write',
      complete: true,
      results: ['created', 'failed'],
      pass: true,
      caughtUp: true,
      all: false,
      lines: 2,
    },
  ] as const)('passReported: $name', ({ complete, results, pass, caughtUp, all, lines }) => {
    const outcomes = results.map((result): ApplyOutcome =>
      result === 'created'
        ? { key: KEY, action: createA, result, object: stored }
        : { key: KEY, action: createA, result, message: 'm', error: undefined },
    );
    const base = {
      leader: true,
      endpoints: 1,
      services: 2,
      actions: outcomes.length,
      deferred: 0,
      planMs: 1.4,
      applyMs: 2.6,
      normalEventsFiltered: 0,
    };
    const step = passReported(m0, { ...base, complete, outcomes });
    expect(step.queue.length > 0).toBe(pass);
    expect(step.caughtUpNow).toBe(caughtUp);
    expect(step.memory.caughtUp).toBe(caughtUp);
    expect(step.allApplied).toBe(all);
    expect(step.log).toHaveLength(lines);
    // Caught up once: a later pass does not say it again.
    expect(passReported(step.memory, { ...base, complete, outcomes }).caughtUpNow).toBe(false);
  });
});
