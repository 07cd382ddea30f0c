import { describe, expect, it } from 'vitest';
import {
  ALIAS_ANNOTATION,
  ENDPOINT_ID_ANNOTATION,
  ENDPOINT_IDS_ANNOTATION,
  ROLE_LABEL,
  STATE_LABEL,
} from '../../src/binding/identity.js';
import type { EndpointStatus, PlanAction, ProjectionState } from '../../src/binding/types.js';
import type { ApplyOutcome } from '../../src/controller/apply.js';
import {
  asWritten,
  recordOf,
  stateChanges,
  withWriteErrors,
  writeEvent,
  writeVerb,
} from '../../src/controller/decide/reporting.js';
import type { Service } from '../../src/kube/objects.js';

function internal(id: string, port = 10000, state = 'projected'): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: id.replace('_', '-'),
      namespace: 'ops',
      labels: { [ROLE_LABEL]: 'internal', [STATE_LABEL]: state },
      annotations: { [ENDPOINT_ID_ANNOTATION]: id },
    },
    spec: { type: 'ClusterIP', ports: [{ name: 'http-80', protocol: 'TCP', port: 80, targetPort: port }] },
  };
}
function alias(ids: string[]): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: 'api',
      namespace: 'prod',
      labels: { [ROLE_LABEL]: 'alias' },
      annotations: { [ENDPOINT_IDS_ANNOTATION]: JSON.stringify(ids) },
    },
    spec: { type: 'ExternalName', externalName: 'ep-a.ops.svc.cluster.local' },
  };
}
const live = (svc: Service): Service => ({
  ...svc,
  metadata: { ...svc.metadata, uid: 'u1', resourceVersion: '7' },
});

const create = (desired: Service): PlanAction => ({ op: 'create', key: 'ops/ep-a', desired });
const update = (desired: Service, from: Service): PlanAction => ({
  op: 'update',
  key: 'ops/ep-a',
  desired,
  object: live(from),
});
const del = (svc: Service): PlanAction => ({ op: 'delete', key: 'ops/ep-a', live: live(svc) });

describe('Created, Updated, Deleted or Repaired', () => {
  const a = internal('ep_a', 10000);
  const a2 = internal('ep_a', 10001);
  it.each([
    ['a create, nothing written before', create(a), 'created', undefined, 'Created'],
    ['a create of what we last wrote (deleted by someone)', create(a), 'created', a, 'Repaired'],
    ['a create of something else than we last wrote', create(a2), 'created', a, 'Created'],
    ['an update after our desired state changed', update(a2, a), 'updated', a, 'Updated'],
    ['an update back to what we last wrote (edited by someone)', update(a, a2), 'updated', a, 'Repaired'],
    ['an update, nothing written before (a restart)', update(a, a2), 'updated', undefined, 'Updated'],
    ['a delete', del(a), 'deleted', a, 'Deleted'],
  ] as const)('%s → %s', (_what, action, result, lastWritten, verb) => {
    const outcome =
      result === 'deleted'
        ? ({ key: action.key, action, result, deleted: live(a) } as const)
        : ({ key: action.key, action, result, object: live(a) } as const);
    expect(writeVerb(outcome, lastWritten)).toBe(verb);
  });
});

describe('the Event of each write outcome', () => {
  const a = internal('ep_a');
  const out = (o: Partial<ApplyOutcome> & Pick<ApplyOutcome, 'result' | 'action'>): ApplyOutcome =>
    ({ key: 'ops/ep-a', ...o }) as ApplyOutcome;
  it.each([
    [
      'created',
      out({ result: 'created', action: create(a), object: live(a) }),
      { type: 'Normal', reason: 'Created', message: 'Created internal Service ops/ep-a (endpoint ep_a)' },
    ],
    [
      'updated',
      out({ result: 'updated', action: update(internal('ep_a', 2), a), object: live(a) }),
      { type: 'Normal', reason: 'Updated', message: 'Updated internal Service ops/ep-a (endpoint ep_a)' },
    ],
    [
      'deleted',
      out({ result: 'deleted', action: del(a), deleted: live(a) }),
      { type: 'Normal', reason: 'Deleted', message: 'Deleted internal Service ops/ep-a (endpoint ep_a)' },
    ],
    [
      'failed',
      out({ result: 'failed', action: create(a), message: 'forbidden', error: new Error('forbidden') }),
      { type: 'Warning', reason: 'WriteFailed', message: 'Could not create Service ops/ep-a: forbidden' },
    ],
    [
      'conflict on update',
      out({ result: 'conflict', action: update(a, internal('ep_a', 2)), message: 'kept changing' }),
      { type: 'Warning', reason: 'WriteFailed', message: 'Could not update Service ops/ep-a: kept changing' },
    ],
    [
      'conflict on delete (the name holds another object)',
      out({ result: 'conflict', action: del(a), message: 'x' }),
      undefined,
    ],
    ['foreign (told by the state Event)', out({ result: 'foreign', action: create(a) }), undefined],
    ['skipped (not leader)', out({ result: 'skipped', action: create(a) }), undefined],
  ] as const)('%s', (_what, outcome, expected) => {
    const e = writeEvent(outcome, undefined);
    if (expected === undefined) expect(e).toBeUndefined();
    else expect(e).toMatchObject({ ...expected, target: { kind: 'Service' } });
  });

  it('a repair says so, on the Service written', () => {
    const e = writeEvent(out({ result: 'created', action: create(a), object: live(a) }), a);
    expect(e).toMatchObject({
      reason: 'Repaired',
      message:
        'Restored internal Service ops/ep-a after it was changed or deleted outside endpoint-binder (endpoint ep_a)',
      target: { kind: 'Service', object: { metadata: { uid: 'u1' } } },
    });
  });

  it('an alias names every endpoint it serves; a failed delete goes on the live object', () => {
    const al = alias(['ep_a', 'ep_b']);
    expect(
      writeEvent(out({ result: 'created', action: create(al), object: live(al) }), undefined)?.message,
    ).toBe('Created alias Service ops/ep-a (endpoint ep_a, ep_b)');
    const e = writeEvent(out({ result: 'failed', action: del(al), message: 'boom', error: 1 }), undefined);
    expect(e?.target).toMatchObject({ kind: 'Service', object: { metadata: { uid: 'u1' } } });
  });
});

describe('what is recorded for each outcome', () => {
  const a = internal('ep_a');
  const written = live(a);
  it.each([
    [
      'created',
      { result: 'created', action: create(a), object: written },
      { pending: { write: written }, failure: 'clear', foreign: false, lastWritten: { set: a } },
    ],
    [
      'deleted',
      { result: 'deleted', action: del(a), deleted: written },
      { pending: { delete: written }, failure: 'clear', foreign: false, lastWritten: 'clear' },
    ],
    [
      'foreign',
      { result: 'foreign', action: create(a) },
      { pending: undefined, failure: 'clear', foreign: true, lastWritten: 'clear' },
    ],
    [
      'foreign after the recreate deleted ours',
      { result: 'foreign', action: create(a), deletedFirst: written },
      { pending: { delete: written }, failure: 'clear', foreign: true, lastWritten: 'clear' },
    ],
    [
      'conflict on update: backs off, shows the error',
      { result: 'conflict', action: update(a, a), message: 'kept changing' },
      { pending: 'forget', failure: { message: 'kept changing' }, foreign: false, lastWritten: undefined },
    ],
    [
      'conflict on delete: the cache decides again, no error',
      { result: 'conflict', action: del(a), message: 'replaced' },
      { pending: 'forget', failure: undefined, foreign: false, lastWritten: undefined },
    ],
    [
      'failed',
      { result: 'failed', action: create(a), message: '403', error: 403 },
      { pending: 'forget', failure: { message: '403' }, foreign: false, lastWritten: undefined },
    ],
    [
      'skipped',
      { result: 'skipped', action: create(a) },
      { pending: undefined, failure: undefined, foreign: false, lastWritten: undefined },
    ],
  ] as const)('%s', (_what, o, expected) => {
    expect(recordOf({ key: 'ops/ep-a', ...o })).toEqual(expected);
  });
});

describe('state changes and their Events', () => {
  const st = (id: string, state: ProjectionState, withInternal = true): EndpointStatus => ({
    id,
    url: `http://${id}.prod:80`,
    state,
    reason: state === 'projected' ? '' : `because ${state}`,
    ...(withInternal ? { internalService: { namespace: 'ops', name: id.replace('_', '-') } } : {}),
  });
  const services = new Map([['ops/ep-a', internal('ep_a')]]);

  it.each([
    ['first seen projected: logged, no Event', undefined, st('ep_a', 'projected'), undefined],
    [
      'first seen in conflict: a Warning on its internal Service',
      undefined,
      st('ep_a', 'name-conflict'),
      { type: 'Warning', reason: 'NameConflict', target: { kind: 'Service' } },
    ],
    [
      'conflict resolved: Projected',
      'name-conflict',
      st('ep_a', 'projected'),
      { type: 'Normal', reason: 'Projected', message: 'Endpoint ep_a (http://ep_a.prod:80) is projected' },
    ],
    [
      'no Service of its own: on the Pod',
      undefined,
      st('ep_x', 'invalid-url', false),
      {
        type: 'Warning',
        reason: 'InvalidURL',
        target: { kind: 'Pod' },
        message: 'Endpoint ep_x (http://ep_x.prod:80): because invalid-url',
      },
    ],
    ['not selected: logged, no Event', 'projected', st('ep_a', 'not-selected', false), undefined],
    [
      'a write failure: WriteFailed',
      'projected',
      st('ep_a', 'error'),
      { type: 'Warning', reason: 'WriteFailed' },
    ],
    ['ports exhausted', undefined, st('ep_a', 'ports-exhausted'), { reason: 'PortsExhausted' }],
    ['namespace missing', undefined, st('ep_a', 'namespace-missing'), { reason: 'NamespaceMissing' }],
    ['port conflict', undefined, st('ep_a', 'port-conflict'), { reason: 'PortConflict' }],
  ] as const)('%s', (_what, prev, status, event) => {
    const previous = new Map<string, ProjectionState>(prev ? [[status.id, prev]] : []);
    const r = stateChanges(previous, [status], services);
    expect(r.changes).toEqual([{ status, previous: prev }]);
    if (event === undefined) expect(r.events).toEqual([]);
    else expect(r.events).toMatchObject([event]);
    expect([...r.next]).toEqual([[status.id, status.state]]);
  });

  it('an unchanged state is no change; an endpoint gone is forgotten', () => {
    const r = stateChanges(
      new Map<string, ProjectionState>([
        ['ep_a', 'projected'],
        ['ep_gone', 'projected'],
      ]),
      [st('ep_a', 'projected')],
      services,
    );
    expect(r.changes).toEqual([]);
    expect(r.events).toEqual([]);
    expect([...r.next.keys()]).toEqual(['ep_a']);
  });
});

describe('the error overlay', () => {
  it("marks every endpoint a failed Service serves, with the API server's message, and no other", () => {
    const statuses: EndpointStatus[] = [
      { id: 'ep_a', url: 'http://api.prod:80', state: 'projected', reason: '' },
      { id: 'ep_b', url: 'tcp://api.prod:5432', state: 'projected', reason: '' },
      { id: 'ep_c', url: 'http://web.prod:80', state: 'projected', reason: '' },
    ];
    const services = new Map([
      ['prod/api', alias(['ep_a', 'ep_b'])],
      ['ops/ep-c', internal('ep_c')],
    ]);
    const out = withWriteErrors(statuses, services, new Map([['prod/api', 'services "api" is forbidden']]));
    expect(out.map((s) => [s.id, s.state, s.reason])).toEqual([
      ['ep_a', 'error', 'writing its Services failed: services "api" is forbidden'],
      ['ep_b', 'error', 'writing its Services failed: services "api" is forbidden'],
      ['ep_c', 'projected', ''],
    ]);
    expect(withWriteErrors(statuses, services, new Map())).toEqual(statuses);
    // A failure of a Service no longer desired marks nobody.
    expect(withWriteErrors(statuses, services, new Map([['prod/gone', 'x']]))).toEqual(statuses);
  });
});

describe('the Services a pass planned, as written', () => {
  it("an internal Service written with its new alias's uid is planned so; unchanged writes keep the plan's map", () => {
    const planned = internal('ep_a');
    const alsoPlanned = alias(['ep_a']);
    const desired = new Map([
      ['ops/ep-a', planned],
      ['prod/api', alsoPlanned],
    ]);
    const withUid: Service = {
      ...planned,
      metadata: {
        ...planned.metadata,
        annotations: { ...planned.metadata.annotations, [ALIAS_ANNOTATION]: 'prod/api/u9' },
      },
    };
    const aliasCreated: ApplyOutcome = {
      key: 'prod/api',
      action: { op: 'create', key: 'prod/api', desired: alsoPlanned },
      result: 'created',
      object: live(alsoPlanned),
    };
    const written = asWritten(desired, [
      aliasCreated,
      { key: 'ops/ep-a', action: create(withUid), result: 'created', object: live(withUid) },
    ]);
    expect(written.get('ops/ep-a')).toBe(withUid);
    expect(written.get('prod/api')).toBe(alsoPlanned);
    expect(desired.get('ops/ep-a')).toBe(planned);
    // Nothing written differently from the plan, or nothing written: the plan's own map.
    expect(asWritten(desired, [aliasCreated])).toBe(desired);
    const failed: ApplyOutcome = {
      key: 'ops/ep-a',
      action: create(withUid),
      result: 'failed',
      message: 'boom',
      error: new Error('boom'),
    };
    expect(asWritten(desired, [failed])).toBe(desired);
  });
});
