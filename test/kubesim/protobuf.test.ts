import { describe, expect, it } from 'vitest';
import type { Kubesim } from '../../src/kubesim/index.js';
import { decodeProtobufObject } from '../../src/kubesim/protobuf/decode.js';
import { namespaceResource } from '../../src/kubesim/resources/namespaces.js';
import { useSim, type Loose } from './helpers.js';

const start = useSim();
const PB = 'application/vnd.kubernetes.protobuf';

/**
 * Request bodies captured from kubectl 1.32 (`-v=9`): `kubectl create namespace x` and
 * `kubectl create service nodeport foo --tcp=80:8080 --node-port=30080`.
 */
const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');
const KUBECTL_NAMESPACE = hex(`
  6b387300 0a0f0a027631 1209 4e616d657370616365 1219 0a11 0a0178 1200 1a00 2200 2a00 3200 3800 4200
  1200 1a02 0a00 1a00 2200`);
const KUBECTL_SERVICE = hex(`
  6b387300 0a0d0a027631 1207 53657276696365 126a 0a1f 0a03666f6f 1200 1a00 2200 2a00 3200 3800 4200
  5a0a 0a03617070 1203666f6f
  1243 0a1d 0a07 38302d38303830 1203 544350 1850 2207 0800 10903f 1a00 2880eb01
  120a 0a03617070 1203666f6f 1a00 2208 4e6f6465506f7274 3a00 4200 5200 5a00 6000 6800 1a02 0a00 1a00 2200`);

// A minimal protobuf wire encoder, written from the encoding spec (independent of the code under test).
function varint(n: number): number[] {
  const out: number[] = [];
  let v = BigInt(n);
  if (v < 0n) v += 1n << 64n;
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) b |= 0x80;
    out.push(b);
  } while (v > 0n);
  return out;
}
const bytes = (field: number, b: number[]) => [...varint((field << 3) | 2), ...varint(b.length), ...b];
const str = (field: number, s: string) => bytes(field, [...Buffer.from(s, 'utf8')]);
const num = (field: number, n: number) => [...varint(field << 3), ...varint(n)];
const entry = (field: number, k: string, v: string) => bytes(field, [...str(1, k), ...str(2, v)]);
function envelope(apiVersion: string, kind: string, raw: number[], extra: number[] = []): Buffer {
  return Buffer.from([
    0x6b,
    0x38,
    0x73,
    0x00,
    ...bytes(1, [...str(1, apiVersion), ...str(2, kind)]),
    ...bytes(2, raw),
    ...extra,
  ]);
}

async function postPb(sim: Kubesim, path: string, body: Buffer): Promise<{ status: number; body: Loose }> {
  const res = await fetch(sim.url + path, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${sim.adminToken}`,
      'Content-Type': PB,
      Accept: `${PB},application/json`,
    },
    body,
  });
  expect(res.headers.get('content-type')).toBe('application/json');
  return { status: res.status, body: await res.json() };
}

describe('kubesim protobuf request bodies', () => {
  it('creates the Namespace kubectl create namespace sends', async () => {
    const sim = await start();
    const res = await postPb(sim, '/api/v1/namespaces?fieldManager=kubectl-create', KUBECTL_NAMESPACE);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      kind: 'Namespace',
      apiVersion: 'v1',
      metadata: { name: 'x', labels: { 'kubernetes.io/metadata.name': 'x' } },
      spec: { finalizers: ['kubernetes'] },
      status: { phase: 'Active' },
    });
    // Empty strings on the wire are Go zero values: unset, not "".
    expect(res.body.metadata.namespace).toBeUndefined();
    expect(res.body.metadata.generateName).toBeUndefined();
  });

  it('creates the Service kubectl create service nodeport sends', async () => {
    const sim = await start();
    const res = await postPb(sim, '/api/v1/namespaces/default/services', KUBECTL_SERVICE);
    expect(res.status).toBe(201);
    expect(res.body.metadata).toMatchObject({ name: 'foo', namespace: 'default', labels: { app: 'foo' } });
    expect(res.body.spec).toMatchObject({
      type: 'NodePort',
      selector: { app: 'foo' },
      ports: [{ name: '80-8080', protocol: 'TCP', port: 80, targetPort: 8080, nodePort: 30080 }],
      sessionAffinity: 'None',
      externalTrafficPolicy: 'Cluster',
    });
    expect(res.body.spec.clusterIP).toMatch(/^10\./);
    expect(res.body.spec.healthCheckNodePort).toBeUndefined();
    expect(res.body.spec.publishNotReadyAddresses).toBeUndefined();
  });

  it('decodes times, owner references, maps, string target ports and pointer fields', () => {
    const time = (seconds: number) => [...num(1, seconds)];
    const meta = [
      ...str(1, 'web'),
      ...str(3, 'default'),
      ...num(7, 0),
      ...bytes(8, time(1_700_000_000)),
      ...num(10, 0), // deletionGracePeriodSeconds is a pointer: 0 is a value
      ...entry(11, 'app', 'web'),
      ...entry(12, 'note', 'hi'),
      ...bytes(13, [
        ...str(1, 'Deployment'),
        ...str(3, 'web'),
        ...str(4, 'uid-1'),
        ...str(5, 'apps/v1'),
        ...num(6, 0),
      ]),
      ...str(14, 'example.com/cleanup'),
    ];
    const spec = [
      ...bytes(1, [
        ...str(1, 'https'),
        ...str(2, 'TCP'),
        ...num(3, 443),
        ...bytes(4, [...num(1, 1), ...str(3, 'https')]),
      ]),
      ...bytes(1, [...str(1, 'zero'), ...str(2, 'UDP'), ...num(3, 0)]),
      ...str(3, '10.96.0.10'),
      ...str(17, 'SingleStack'),
      ...str(18, '10.96.0.10'),
      ...str(19, 'IPv4'),
      ...num(20, 0), // allocateLoadBalancerNodePorts=false
      ...bytes(14, bytes(1, num(1, 600))),
    ];
    const obj = decodeProtobufObject(
      envelope('v1', 'Service', [...bytes(1, meta), ...bytes(2, spec), ...bytes(3, [])]),
      namespaceResource(),
    );
    expect(obj).toEqual({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: {
        name: 'web',
        namespace: 'default',
        creationTimestamp: '2023-11-14T22:13:20Z',
        deletionGracePeriodSeconds: 0,
        labels: { app: 'web' },
        annotations: { note: 'hi' },
        ownerReferences: [
          { kind: 'Deployment', name: 'web', uid: 'uid-1', apiVersion: 'apps/v1', controller: false },
        ],
        finalizers: ['example.com/cleanup'],
      },
      spec: {
        ports: [
          { name: 'https', protocol: 'TCP', port: 443, targetPort: 'https' },
          { name: 'zero', protocol: 'UDP', port: 0 },
        ],
        clusterIP: '10.96.0.10',
        ipFamilyPolicy: 'SingleStack',
        clusterIPs: ['10.96.0.10'],
        ipFamilies: ['IPv4'],
        allocateLoadBalancerNodePorts: false,
        sessionAffinityConfig: { clientIP: { timeoutSeconds: 600 } },
      },
      status: {},
    });
  });

  it('rejects bodies that are not protobuf, or not the kind the URL names, with 400', async () => {
    const sim = await start();
    const json = await postPb(sim, '/api/v1/namespaces', Buffer.from('{"metadata":{"name":"x"}}'));
    expect(json.status).toBe(400);
    expect(json.body.message).toContain('expected prefix [107 56 115 0]');

    const truncated = await postPb(sim, '/api/v1/namespaces', KUBECTL_NAMESPACE.subarray(0, 20));
    expect(truncated.status).toBe(400);
    expect(truncated.body.reason).toBe('BadRequest');

    const wrongKind = await postPb(sim, '/api/v1/namespaces/default/services', KUBECTL_NAMESPACE);
    expect(wrongKind.status).toBe(400);
    expect(wrongKind.body.message).toContain(
      'the kind in the data (Namespace) does not match the expected kind (Service)',
    );

    const encoded = await postPb(
      sim,
      '/api/v1/namespaces',
      envelope('v1', 'Namespace', bytes(1, str(1, 'gz')), str(3, 'gzip')),
    );
    expect(encoded.status).toBe(400);
    expect(encoded.body.message).toContain('unsupported contentEncoding "gzip"');
    // Nothing of the rejected requests was stored.
    const list = await fetch(`${sim.url}/api/v1/namespaces`, {
      headers: { Authorization: `Bearer ${sim.adminToken}` },
    }).then((r) => r.json() as Promise<Loose>);
    expect(list.items.map((n: Loose) => n.metadata.name).sort()).toEqual(['default', 'kube-system']);
  });

  it('answers kinds without a protobuf message with 415', async () => {
    const sim = await start();
    const lease = envelope('coordination.k8s.io/v1', 'Lease', bytes(1, str(1, 'leader')));
    const res = await postPb(sim, '/apis/coordination.k8s.io/v1/namespaces/default/leases', lease);
    expect(res.status).toBe(415);
    expect(res.body.reason).toBe('UnsupportedMediaType');
    expect(res.body.message).toContain('application/json');
  });
});
