import { describe, expect, it } from 'vitest';
import { ROLE_INTERNAL, ROLE_LABEL } from '../../src/binding/identity.js';
import { ownershipAfterPass, RECORDED_ABSENT_GRACE_MS } from '../../src/binding/ownership/index.js';
import type { Service } from '../../src/kube/objects.js';

const NS = 'endpoint-binder';

function internal(name: string, uid: string, finalizers?: string[]): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name,
      namespace: NS,
      uid,
      labels: { [ROLE_LABEL]: ROLE_INTERNAL },
      ...(finalizers ? { finalizers } : {}),
    },
    spec: {},
  };
}

function afterDelete(svc: Service, owned: Service[], now: number, absentSince = new Map<string, number>()) {
  return ownershipAfterPass({
    now,
    operatorNamespace: NS,
    owned,
    trusted: owned,
    outcomes: [{ key: `${NS}/${svc.metadata.name}`, result: 'deleted', deleted: svc }],
    recorded: { uids: new Set([svc.metadata.uid!]), intents: new Set() },
    absentSince,
    intentAbsentSince: new Map(),
  });
}

describe('ownershipAfterPass: the uid of a deleted internal Service', () => {
  it('is unlisted at once when the delete removed it', () => {
    const svc = internal('ep-1', 'u1');
    const r = afterDelete(svc, [svc], 1_000);
    expect(r.change.remove, JSON.stringify(r.change)).toEqual(['u1']);
  });

  it('stays listed while finalizers hold the delete, and goes after the absence grace once the Service is gone', () => {
    // The cache still shows the Service (deletionTimestamp set, held by another controller's finalizer).
    const held = internal('ep-1', 'u1', ['example.com/hold']);
    const during = afterDelete(held, [held], 1_000);
    expect(during.change.remove, `while held: ${JSON.stringify(during.change)}`).toEqual([]);
    // The finalizer is removed and the Service is gone: the absence clock starts, then unlists it.
    const gone = ownershipAfterPass({
      now: 2_000,
      operatorNamespace: NS,
      owned: [],
      trusted: [],
      outcomes: [],
      recorded: { uids: new Set(['u1']), intents: new Set() },
      absentSince: during.change.absentSince,
      intentAbsentSince: new Map(),
    });
    expect(gone.change.remove).toEqual([]);
    const later = ownershipAfterPass({
      now: 2_000 + RECORDED_ABSENT_GRACE_MS,
      operatorNamespace: NS,
      owned: [],
      trusted: [],
      outcomes: [],
      recorded: { uids: new Set(['u1']), intents: new Set() },
      absentSince: gone.change.absentSince,
      intentAbsentSince: new Map(),
    });
    expect(later.change.remove, JSON.stringify(later.change)).toEqual(['u1']);
  });
});
