import { describe, expect, it } from 'vitest';
import {
  INSTANCE_LABEL,
  OPERATOR_NAMESPACE_LABEL,
  REASON_ANNOTATION,
  ROLE_LABEL,
  STATE_LABEL,
} from '../../src/binding/identity.js';
import {
  LEFT_BEHIND_STATE,
  leftBehindAliases,
  relabelledLeftBehind,
} from '../../src/binding/ownership/index.js';
import type { Service } from '../../src/kube/objects.js';

const OPNS = 'endpoint-binder';
const alias = (name: string, uid: string, extra: Record<string, string> = {}): Service => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: {
    name,
    namespace: 'prod',
    uid,
    resourceVersion: '7',
    labels: {
      [INSTANCE_LABEL]: 'eb',
      [OPERATOR_NAMESPACE_LABEL]: OPNS,
      [ROLE_LABEL]: 'alias',
      [STATE_LABEL]: 'projected',
      team: 'tenant',
      ...extra,
    },
    annotations: { 'endpoint-binder.io/endpoint-ids': '["ep_1"]', note: 'theirs' },
  },
  spec: { type: 'ExternalName', externalName: 'ep-1.endpoint-binder.svc.cluster.local' },
});

describe('aliases left behind (pure)', () => {
  it('lists every lost-label and unanchored alias; relabels only the lost-label ones provably ours', () => {
    const ours = alias('web', 'u-ours');
    const unknown = alias('api', 'u-unknown');
    const unanchored = alias('db', 'u-db');
    const r = leftBehindAliases({
      lostLabel: [ours, unknown],
      unanchored: [unanchored],
      provenAliasUids: new Set(['u-ours', 'u-db']),
      operatorNamespace: OPNS,
    });
    expect(r.aliases.map((a) => a.name)).toEqual(['api', 'db', 'web']);
    expect(r.aliases.find((a) => a.name === 'web')!.reason).toMatch(
      /this install created this alias \(endpoint ep_1\)/,
    );
    expect(r.aliases.find((a) => a.name === 'api')!.reason).toMatch(
      /no internal Service of this install records it/,
    );
    // An unanchored one is never relabelled, even with a remembered uid: it still has managed-by
    // and is the plan's to judge; only the lost-label alias with a proof is written.
    expect(r.relabel.map((s) => s.metadata.name)).toEqual(['web']);
  });

  it('a relabelled alias needs no second write', () => {
    const once = relabelledLeftBehind(alias('web', 'u-ours'));
    const r = leftBehindAliases({
      lostLabel: [once],
      unanchored: [],
      provenAliasUids: new Set(['u-ours']),
      operatorNamespace: OPNS,
    });
    expect(r.aliases).toHaveLength(1);
    expect(r.relabel).toEqual([]);
  });

  it('the relabel changes only our state label and reason annotation, keeping the resourceVersion as precondition', () => {
    const before = alias('web', 'u-ours');
    const after = relabelledLeftBehind(before);
    expect(after.metadata.labels?.[STATE_LABEL]).toBe(LEFT_BEHIND_STATE);
    expect(after.metadata.annotations?.[REASON_ANNOTATION]).toMatch(/lost the label/);
    expect(after.metadata.resourceVersion).toBe('7');
    const { [STATE_LABEL]: _s, ...restBefore } = before.metadata.labels!;
    const { [STATE_LABEL]: _t, ...restAfter } = after.metadata.labels!;
    expect(restAfter).toEqual(restBefore);
    const { [REASON_ANNOTATION]: _r, ...annotationsAfter } = after.metadata.annotations!;
    expect(annotationsAfter).toEqual(before.metadata.annotations);
    expect(after.spec).toEqual(before.spec);
  });
});
