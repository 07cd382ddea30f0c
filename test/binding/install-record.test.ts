import { describe, expect, it } from 'vitest';
import {
  installRecordConfigMap,
  installRecordName,
  parseInstallRecord,
  parseRecordedInternalServices,
  recordedInternalOf,
  isOwnedBy,
} from '../../src/binding/ownership/index.js';

const id = { release: 'eb', operatorNamespace: 'binder' };

describe('install record (the ConfigMap only the controller writes)', () => {
  it('round-trips the ingress address and operator id, carrying the ownership labels', () => {
    const cm = installRecordConfigMap(id, {
      ingressAddress: 'ingress.example.test:443',
      operatorId: 'k8sop_1',
    });
    expect(cm.metadata).toMatchObject({ name: 'eb-install', namespace: 'binder' });
    expect(installRecordName(id)).toBe('eb-install');
    expect(isOwnedBy(cm, id)).toBe(true);
    expect(parseInstallRecord(cm)).toEqual({
      ok: true,
      record: { ingressAddress: 'ingress.example.test:443', operatorId: 'k8sop_1' },
    });
    expect(parseInstallRecord(installRecordConfigMap(id, {}))).toEqual({ ok: true, record: {} });
  });

  it('refuses a malformed address naming the key and the rule', () => {
    const cm = installRecordConfigMap(id, { ingressAddress: 'nope' });
    const r = parseInstallRecord(cm);
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect(r.message).toBe(
        'ConfigMap eb-install data.ingress-address: must be host:port with IPv6 hosts in brackets ([::1]:8080), got "nope"',
      );
  });

  it('round-trips the internal Services list, sorted and deduplicated, and refuses a malformed one apart from the address', () => {
    const cm = installRecordConfigMap(id, {
      ingressAddress: 'ingress.example.test:443',
      internalServices: ['b-2', 'a-1', 'b-2'],
    });
    expect(cm.data?.['internal-services']).toBe('a-1,b-2');
    expect(parseRecordedInternalServices(cm)).toEqual({ ok: true, uids: ['a-1', 'b-2'] });
    expect(parseRecordedInternalServices(installRecordConfigMap(id, { internalServices: [] }))).toEqual({
      ok: true,
      uids: [],
    });
    // No record, or one without the key (an upgrade): no list.
    expect(parseRecordedInternalServices(undefined)).toEqual({ ok: true, uids: undefined });
    expect(parseRecordedInternalServices(installRecordConfigMap(id, {}))).toEqual({
      ok: true,
      uids: undefined,
    });
    const bad = { ...cm, data: { ...cm.data, 'internal-services': 'a-1, b 2' } };
    expect(parseRecordedInternalServices(bad)).toEqual({
      ok: false,
      message: 'ConfigMap eb-install data.internal-services: must be Service uids separated by ","',
    });
    // A bad list never costs the forwarders their ingress address.
    expect(parseInstallRecord(bad)).toEqual({
      ok: true,
      record: { ingressAddress: 'ingress.example.test:443' },
    });
  });

  it('gives no list without a record, nothing that counts from a ConfigMap not of this install', () => {
    const cm = installRecordConfigMap(id, { internalServices: ['a-1'] });
    expect(recordedInternalOf(undefined, id)).toEqual({ uids: undefined });
    expect(recordedInternalOf(cm, id)).toEqual({ uids: new Set(['a-1']) });
    const forged = { ...cm, metadata: { ...cm.metadata, labels: {} } };
    expect(recordedInternalOf(forged, id)).toEqual({
      uids: new Set(),
      problem:
        "ConfigMap eb-install lacks this install's labels; its internal-services is ignored and no internal Service counts",
    });
    const bad = { ...cm, data: { 'internal-services': ' ' } };
    expect(recordedInternalOf(bad, id).uids).toBeUndefined();
  });
});
