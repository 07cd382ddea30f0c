import { describe, expect, it } from 'vitest';
import { api, createSvc, svc, useSim, type Res } from './helpers.js';

const start = useSim();
const SVC = '/api/v1/namespaces/default/services';

function causes(r: Res): { reason: string; field: string; message: string }[] {
  expect(r.status).toBe(422);
  expect(r.body.reason).toBe('Invalid');
  return r.body.details.causes;
}

describe('kubesim Service validation (422 Invalid)', () => {
  it('name must be a DNS-1035 label of at most 63 characters', async () => {
    const sim = await start();
    const upper = await api(sim, 'POST', SVC, svc('Web'));
    expect(upper.body.details).toMatchObject({ name: 'Web', kind: 'Service' });
    expect(causes(upper)).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: 'metadata.name',
        message:
          "Invalid value: \"Web\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
      },
    ]);
    expect(
      upper.body.message.startsWith(
        'Service "Web" is invalid: metadata.name: Invalid value: "Web": a DNS-1035',
      ),
    ).toBe(true);
    const digit = await api(sim, 'POST', SVC, svc('1abc'));
    expect(causes(digit)[0]?.field).toBe('metadata.name');
    const long = await api(sim, 'POST', SVC, svc('a'.repeat(64)));
    expect(causes(long)[0]?.message).toContain('must be no more than 63 characters');
    const none = await api(sim, 'POST', SVC, { metadata: {}, spec: { ports: [{ port: 80 }] } });
    expect(causes(none)).toEqual([
      {
        reason: 'FieldValueRequired',
        field: 'metadata.name',
        message: 'Required value: name or generateName is required',
      },
    ]);
  });

  it('ports: range, protocol, targetPort forms, names when several, unique names and port+protocol', async () => {
    const sim = await start();
    const r = await api(sim, 'POST', SVC, {
      metadata: { name: 'p' },
      spec: {
        ports: [
          { name: 'a', port: 0 },
          { name: 'a', port: 70000, protocol: 'HTTP' },
          { port: 81, targetPort: 'Not_Valid' },
          { name: 'd', port: 82, targetPort: 0 },
          { name: 'e', port: 83, targetPort: 99999 },
          { name: 'f', port: 84, targetPort: 'http' },
          { name: 'g', port: 84 },
        ],
      },
    });
    const c = causes(r);
    const fields = c.map((x) => `${x.field} ${x.reason}`);
    expect(fields).toEqual([
      'spec.ports[0].port FieldValueInvalid',
      'spec.ports[0].targetPort FieldValueInvalid', // defaulted from port 0
      'spec.ports[1].name FieldValueDuplicate',
      'spec.ports[1].port FieldValueInvalid',
      'spec.ports[1].protocol FieldValueNotSupported',
      'spec.ports[1].targetPort FieldValueInvalid', // defaulted from port 70000
      'spec.ports[2].name FieldValueRequired',
      'spec.ports[2].targetPort FieldValueInvalid',
      'spec.ports[4].targetPort FieldValueInvalid', // ports[3] targetPort 0 defaults to its port
      'spec.ports[6] FieldValueDuplicate',
    ]);
    expect(c.find((x) => x.field === 'spec.ports[0].port')?.message).toBe(
      'Invalid value: 0: must be between 1 and 65535, inclusive',
    );
    expect(c.find((x) => x.field === 'spec.ports[1].protocol')?.message).toBe(
      'Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"',
    );
    expect(c.find((x) => x.field === 'spec.ports[2].targetPort')?.message).toContain(
      'must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)',
    );
  });

  it('ClusterIP services need a port; a single unnamed port is fine', async () => {
    const sim = await start();
    const r = await api(sim, 'POST', SVC, { metadata: { name: 'noports' }, spec: {} });
    expect(causes(r)).toEqual([
      { reason: 'FieldValueRequired', field: 'spec.ports', message: 'Required value' },
    ]);
    const headless = await api(sim, 'POST', SVC, {
      metadata: { name: 'headless' },
      spec: { clusterIP: 'None' },
    });
    expect(headless.status).toBe(201);
    expect(headless.body.spec.clusterIPs).toEqual(['None']);
  });

  it('unsupported type', async () => {
    const sim = await start();
    const r = await api(sim, 'POST', SVC, svc('t', { type: 'Magic' }));
    expect(causes(r)[0]).toMatchObject({ field: 'spec.type', reason: 'FieldValueNotSupported' });
  });

  it('ExternalName needs a DNS-1123 subdomain and no clusterIP', async () => {
    const sim = await start();
    const missing = await api(sim, 'POST', SVC, { metadata: { name: 'e' }, spec: { type: 'ExternalName' } });
    expect(causes(missing)).toEqual([
      { reason: 'FieldValueRequired', field: 'spec.externalName', message: 'Required value' },
    ]);
    const bad = await api(sim, 'POST', SVC, {
      metadata: { name: 'e' },
      spec: { type: 'ExternalName', externalName: 'Bad_Name' },
    });
    expect(causes(bad)[0]).toMatchObject({ field: 'spec.externalName', reason: 'FieldValueInvalid' });
    const ip = await api(sim, 'POST', SVC, {
      metadata: { name: 'e' },
      spec: { type: 'ExternalName', externalName: 'a.example.com', clusterIP: '10.96.0.10' },
    });
    expect(causes(ip)).toEqual([
      {
        reason: 'FieldValueForbidden',
        field: 'spec.clusterIPs',
        message: 'Forbidden: may not be set for ExternalName services',
      },
    ]);
    const ok = await api(sim, 'POST', SVC, {
      metadata: { name: 'e' },
      spec: { type: 'ExternalName', externalName: 'web.ns.svc.cluster.local.' },
    });
    expect(ok.status).toBe(201);
    expect(ok.body.spec.clusterIP).toBeUndefined();
  });

  it('allocates cluster IPs from the configured range and never twice while allocated', async () => {
    const sim = await start({ serviceClusterIpRange: '10.200.0.0/29' }); // 6 usable addresses
    const ips = new Set<string>();
    for (let i = 0; i < 6; i++) {
      const s = await createSvc(sim, 'default', `s${i}`);
      expect(s.spec.clusterIP).toMatch(/^10\.200\.0\.[1-6]$/);
      ips.add(s.spec.clusterIP);
    }
    expect(ips.size).toBe(6);
    const full = await api(sim, 'POST', SVC, svc('s6'));
    expect(full.status).toBe(500);
    expect(full.body.message).toBe('Internal error occurred: failed to allocate a serviceIP: range is full');
    const freed = (await api(sim, 'DELETE', `${SVC}/s0`)).body.spec.clusterIP;
    const again = await createSvc(sim, 'default', 's6');
    expect(again.spec.clusterIP).toBe(freed);
  });

  it('a requested clusterIP must be in range and free', async () => {
    const sim = await start();
    const out = await api(sim, 'POST', SVC, svc('o', { clusterIP: '192.168.0.1' }));
    expect(causes(out)[0]?.message).toBe(
      'Invalid value: ["192.168.0.1"]: failed to allocate IP 192.168.0.1: the provided network does not match the current range',
    );
    const first = await api(sim, 'POST', SVC, svc('a', { clusterIP: '10.96.0.10' }));
    expect(first.status).toBe(201);
    const taken = await api(sim, 'POST', SVC, svc('b', { clusterIP: '10.96.0.10' }));
    expect(causes(taken)[0]).toMatchObject({
      field: 'spec.clusterIPs',
      message:
        'Invalid value: ["10.96.0.10"]: failed to allocate IP 10.96.0.10: provided IP is already allocated',
    });
    const garbage = await api(sim, 'POST', SVC, svc('c', { clusterIP: 'abc' }));
    expect(causes(garbage)[0]?.field).toBe('spec.clusterIPs[0]');
  });

  it('clusterIP is immutable; omitting it on update keeps it', async () => {
    const sim = await start();
    const s = await createSvc(sim, 'default', 'imm');
    const other = s.spec.clusterIP === '10.96.0.77' ? '10.96.0.78' : '10.96.0.77';
    const change = await api(sim, 'PUT', `${SVC}/imm`, {
      ...s,
      spec: { ...s.spec, clusterIP: other, clusterIPs: [other] },
    });
    expect(causes(change)).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: 'spec.clusterIPs[0]',
        message: `Invalid value: ["${other}"]: may not change once set`,
      },
    ]);
    const omit = await api(sim, 'PUT', `${SVC}/imm`, { ...s, spec: { ports: [{ port: 90 }] } });
    expect(omit.status).toBe(200);
    expect(omit.body.spec.clusterIP).toBe(s.spec.clusterIP);
  });

  it('ClusterIP → ExternalName releases the IP; ExternalName → ClusterIP allocates one', async () => {
    const sim = await start({ serviceClusterIpRange: '10.200.0.0/30' }); // 2 usable addresses
    const a = await createSvc(sim, 'default', 'a');
    await createSvc(sim, 'default', 'b');
    // Changing the type and the clusterIP at once is rejected.
    const keep = await api(sim, 'PUT', `${SVC}/a`, {
      ...a,
      spec: {
        ...a.spec,
        type: 'ExternalName',
        externalName: 'x.example.com',
        clusterIP: '10.200.0.3',
        clusterIPs: ['10.200.0.3'],
      },
    });
    expect(causes(keep)[0]?.field).toBe('spec.clusterIPs');
    // Leaving the old clusterIP untouched: it is wiped and released (dropTypeDependentFields).
    const toExt = await api(
      sim,
      'PATCH',
      `${SVC}/a`,
      { spec: { type: 'ExternalName', externalName: 'x.example.com' } },
      { contentType: 'application/merge-patch+json' },
    );
    expect(toExt.status).toBe(200);
    expect(toExt.body.spec.clusterIP).toBeUndefined();
    const c = await createSvc(sim, 'default', 'c');
    expect(c.spec.clusterIP).toBe(a.spec.clusterIP);
    const back = await api(
      sim,
      'PATCH',
      `${SVC}/a`,
      { spec: { type: 'ClusterIP', externalName: null } },
      { contentType: 'application/merge-patch+json' },
    );
    expect(back.status).toBe(500); // range full
    await api(sim, 'DELETE', `${SVC}/b`);
    const back2 = await api(
      sim,
      'PATCH',
      `${SVC}/a`,
      { spec: { type: 'ClusterIP', externalName: null } },
      { contentType: 'application/merge-patch+json' },
    );
    expect(back2.status).toBe(200);
    expect(back2.body.spec.clusterIP).toMatch(/^10\.200\.0\.[12]$/);
  });

  it('labels are validated', async () => {
    const sim = await start();
    const r = await api(sim, 'POST', SVC, svc('l', {}, { 'bad key!': 'v', ok: 'has space' }));
    expect(causes(r).map((c) => c.field)).toEqual(['metadata.labels', 'metadata.labels']);
  });

  it('leases: leaseDurationSeconds must be > 0', async () => {
    const sim = await start();
    const L = '/apis/coordination.k8s.io/v1/namespaces/default/leases';
    const r = await api(sim, 'POST', L, { metadata: { name: 'l' }, spec: { leaseDurationSeconds: 0 } });
    expect(r.body.message).toBe(
      'Lease.coordination.k8s.io "l" is invalid: spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0',
    );
    expect(r.body.details).toMatchObject({ name: 'l', group: 'coordination.k8s.io', kind: 'Lease' });
    expect(causes(r)[0]?.field).toBe('spec.leaseDurationSeconds');
  });

  it('validation also applies to updates and patches', async () => {
    const sim = await start();
    await createSvc(sim, 'default', 'v');
    const r = await api(
      sim,
      'PATCH',
      `${SVC}/v`,
      { spec: { ports: [{ port: 0 }] } },
      { contentType: 'application/merge-patch+json' },
    );
    expect(causes(r)[0]?.field).toBe('spec.ports[0].port');
  });
});
