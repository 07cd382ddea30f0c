import { describe, expect, it } from 'vitest';
import {
  installRecordConfigMap,
  mergePending,
  nextInstallRecord,
  pendingOfChange,
  type PendingRecordWrite,
} from '../../src/binding/ownership/index.js';
import type { ConfigMap } from '../../src/kube/objects.js';

const id = { release: 'eb', operatorNamespace: 'binder' };

/** A live record as the API server returns it (with a resourceVersion, the replace's precondition). */
function live(data: Record<string, string>): ConfigMap {
  const cm = installRecordConfigMap(id, {});
  return { ...cm, metadata: { ...cm.metadata, resourceVersion: '7' }, data };
}

const uids = (add: string[], remove: string[] = []): PendingRecordWrite => ({
  internal: { add: new Set(add), remove: new Set(remove) },
});

describe('the install record writing rules (ownership door, record-writes.ts)', () => {
  it('refuses a ConfigMap of that name without this install labels, naming it and the fix', () => {
    const foreign: ConfigMap = { metadata: { name: 'eb-install', namespace: 'binder' }, data: {} };
    expect(nextInstallRecord(id, foreign, uids(['u1']))).toEqual({
      op: 'foreign',
      message:
        "ConfigMap binder/eb-install exists without this install's labels; delete it so the controller can write the install record",
    });
  });

  it('creates the record when there is none, with the change applied to an empty list', () => {
    const w = nextInstallRecord(id, undefined, {
      registration: { ingressAddress: 'ingress.test:443', operatorId: 'op1' },
      ...uids(['u2', 'u1']),
    });
    expect(w.op).toBe('create');
    if (w.op === 'foreign') return;
    expect(w.object.data).toEqual({
      'ingress-address': 'ingress.test:443',
      'operator-id': 'op1',
      'internal-services': 'u1,u2',
    });
    expect(w.listed).toEqual({ uids: ['u1', 'u2'], dropped: 0 });
    expect(w.intents).toBeUndefined();
  });

  it('applies a change to the list read now and keeps the keys the write does not carry', () => {
    const existing = live({
      'ingress-address': 'ingress.test:443',
      'internal-services': 'u1,u2',
      intents: 'ns/a',
    });
    const w = nextInstallRecord(id, existing, uids(['u3'], ['u1']));
    expect(w.op).toBe('replace');
    if (w.op === 'foreign') return;
    expect(w.object.data).toEqual({
      'ingress-address': 'ingress.test:443',
      'internal-services': 'u2,u3',
      intents: 'ns/a',
    });
    expect(w.object.metadata.resourceVersion, 'the precondition of the replace').toBe('7');
  });

  it('a registration replaces both of its keys whole; the same content again is unchanged', () => {
    const existing = live({ 'ingress-address': 'old.test:443', 'operator-id': 'op0', intents: 'ns/a' });
    const moved = nextInstallRecord(id, existing, { registration: { ingressAddress: 'new.test:443' } });
    expect(moved.op === 'replace' && moved.object.data).toEqual({
      'ingress-address': 'new.test:443',
      intents: 'ns/a',
    });
    const same = nextInstallRecord(id, existing, {
      registration: { ingressAddress: 'old.test:443', operatorId: 'op0' },
    });
    expect(same.op).toBe('unchanged');
  });

  it('drops the last write-ahead entry with its key, so a settled record reads as before entries existed', () => {
    const existing = live({ 'internal-services': 'u1', intents: 'ns/a' });
    const w = nextInstallRecord(
      id,
      existing,
      pendingOfChange({ add: [], remove: [], removeIntents: ['ns/a'] }),
    );
    expect(w.op === 'replace' && w.object.data).toEqual({ 'internal-services': 'u1' });
  });

  it('folds pending changes: a later remove cancels an earlier add, and the uid list is written even when empty', () => {
    const merged = mergePending(uids(['u1', 'u2']), uids([], ['u1']));
    expect(merged?.internal).toEqual({ add: new Set(['u2']), remove: new Set(['u1']) });
    expect(pendingOfChange({ add: [], remove: [] })).toEqual({
      internal: { add: new Set(), remove: new Set() },
    });
  });
});
