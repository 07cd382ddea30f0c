import { describe, expect, it } from 'vitest';
import { ENDPOINT_URL_ANNOTATION, PORTS_ANNOTATION, ROLE_LABEL } from '../../src/binding/identity.js';
import { allocatePorts, portClaims } from '../../src/binding/ports.js';
import type { PortClaim } from '../../src/binding/ports.js';
import type { Service, ServicePort } from '../../src/kube/objects.js';
import { seeded } from './helpers.js';

const RANGE = { min: 10000, max: 19999 };

function claim(
  url: string,
  port: number,
  name = 'ep-a',
  creationTimestamp = '2026-01-01T00:00:00Z',
): PortClaim {
  return { url, port, service: { namespace: 'endpoint-binder', name, creationTimestamp } };
}

/** A random source that fails the test if it is used. */
const noRandom = () => {
  throw new Error('random() must not be called');
};

function counting(random: () => number): { random: () => number; calls: () => number } {
  let n = 0;
  return {
    random: () => {
      n++;
      return random();
    },
    calls: () => n,
  };
}

describe('allocatePorts: fresh allocation', () => {
  it('gives every URL a distinct port in the range, the same for the same seed', () => {
    const urls = Array.from({ length: 50 }, (_, i) => `http://s${i}.prod:80`);
    const a = allocatePorts({ urls, claims: [], range: RANGE, random: seeded(42) });
    const b = allocatePorts({ urls, claims: [], range: RANGE, random: seeded(42) });
    expect([...a.ports]).toEqual([...b.ports]);
    expect(a.ports.size).toBe(50);
    expect(new Set(a.ports.values()).size).toBe(50);
    for (const p of a.ports.values()) {
      expect(p).toBeGreaterThanOrEqual(RANGE.min);
      expect(p).toBeLessThanOrEqual(RANGE.max);
    }
    expect(a.exhausted).toEqual([]);
    expect(a.repairs).toEqual([]);
  });

  it('maps random() onto the range and probes forward to the next free port, wrapping', () => {
    const r = allocatePorts({
      urls: ['http://a.b:80', 'http://c.d:80', 'http://e.f:80'],
      claims: [],
      range: { min: 100, max: 103 },
      random: () => 0.99,
    });
    expect([...r.ports]).toEqual([
      ['http://a.b:80', 103],
      ['http://c.d:80', 100],
      ['http://e.f:80', 101],
    ]);
  });

  it('ignores duplicate URLs in the input', () => {
    const r = allocatePorts({
      urls: ['http://a.b:80', 'http://a.b:80'],
      claims: [],
      range: RANGE,
      random: seeded(1),
    });
    expect(r.ports.size).toBe(1);
  });

  it('refuses an invalid range, naming the field', () => {
    expect(() =>
      allocatePorts({ urls: [], claims: [], range: { min: 5, max: 4 }, random: seeded(1) }),
    ).toThrow(/portRange: .*min <= max/);
    expect(() =>
      allocatePorts({ urls: [], claims: [], range: { min: 0, max: 4 }, random: seeded(1) }),
    ).toThrow(/portRange/);
  });
});

describe('allocatePorts: the cluster is the source of truth', () => {
  it('keeps claimed ports without drawing a random number', () => {
    const r = allocatePorts({
      urls: ['http://a.b:80', 'tcp://a.b:5432'],
      claims: [
        claim('http://a.b:80', 12345),
        claim('tcp://a.b:5432', 10001),
        claim('http://a.b:80', 12345, 'ep-b'),
      ],
      range: RANGE,
      random: noRandom,
    });
    expect(r.ports).toEqual(
      new Map([
        ['http://a.b:80', 12345],
        ['tcp://a.b:5432', 10001],
      ]),
    );
    expect(r.repairs).toEqual([]);
  });

  it('uses a hint only for a URL without a claim, and only when it is in range and free', () => {
    const hints = new Map([
      ['http://a.b:80', 15000], // claimed elsewhere: the claim wins
      ['http://c.d:80', 15001], // no claim: the hint is used
      ['http://e.f:80', 12345], // taken by a claim of another URL
      ['http://g.h:80', 9], // out of range
    ]);
    const { random, calls } = counting(seeded(3));
    const r = allocatePorts({
      urls: ['http://a.b:80', 'http://c.d:80', 'http://e.f:80', 'http://g.h:80', 'http://i.j:80'],
      claims: [claim('http://a.b:80', 12345)],
      hints,
      range: RANGE,
      random,
    });
    expect(r.ports.get('http://a.b:80')).toBe(12345);
    expect(r.ports.get('http://c.d:80')).toBe(15001);
    expect(r.ports.get('http://e.f:80')).not.toBe(12345);
    expect(r.ports.get('http://g.h:80')).not.toBe(9);
    expect(new Set(r.ports.values()).size).toBe(5);
    expect(calls()).toBe(3);
  });

  it('re-allocates a port outside the range and reports it', () => {
    const r = allocatePorts({
      urls: ['http://a.b:80'],
      claims: [claim('http://a.b:80', 30000, 'ep-a'), claim('http://a.b:80', 30000, 'ep-b')],
      range: RANGE,
      random: seeded(9),
    });
    const port = r.ports.get('http://a.b:80')!;
    expect(port).toBeGreaterThanOrEqual(RANGE.min);
    expect(port).toBeLessThanOrEqual(RANGE.max);
    expect(r.repairs).toEqual([
      {
        kind: 'out-of-range',
        url: 'http://a.b:80',
        port: 30000,
        services: ['endpoint-binder/ep-a', 'endpoint-binder/ep-b'],
        message: expect.stringContaining('outside the range 10000-19999'),
      },
    ]);
  });

  it('one port claimed by two URLs: the claim from the oldest Service keeps it', () => {
    const r = allocatePorts({
      urls: ['http://new.b:80', 'http://old.b:80'],
      claims: [
        claim('http://new.b:80', 11111, 'ep-new', '2026-03-01T00:00:00Z'),
        claim('http://old.b:80', 11111, 'ep-old', '2026-02-01T00:00:00+00:00'),
      ],
      range: RANGE,
      random: seeded(5),
    });
    expect(r.ports.get('http://old.b:80')).toBe(11111);
    expect(r.ports.get('http://new.b:80')).not.toBe(11111);
    expect(r.repairs).toEqual([
      {
        kind: 'duplicate-port',
        port: 11111,
        url: 'http://new.b:80',
        keptBy: 'http://old.b:80',
        services: ['endpoint-binder/ep-new'],
        message: expect.stringContaining('http://old.b:80 (oldest Service) keeps it'),
      },
    ]);
  });

  it('compares creation times as instants, not text, and breaks ties by Service name', () => {
    const r = allocatePorts({
      urls: ['http://a.b:80', 'http://c.d:80'],
      claims: [
        claim('http://a.b:80', 11111, 'ep-a', '2026-02-01T01:30:00+02:00'), // 23:30 the day before
        claim('http://c.d:80', 11111, 'ep-c', '2026-01-31T23:59:00Z'),
      ],
      range: RANGE,
      random: seeded(5),
    });
    expect(r.ports.get('http://a.b:80')).toBe(11111);
    const tie = allocatePorts({
      urls: ['http://a.b:80', 'http://c.d:80'],
      claims: [claim('http://c.d:80', 11111, 'ep-z'), claim('http://a.b:80', 11111, 'ep-y')],
      range: RANGE,
      random: seeded(5),
    });
    expect(tie.ports.get('http://a.b:80')).toBe(11111);
  });

  it('one URL with two ports: the most common wins, then the lowest', () => {
    const common = allocatePorts({
      urls: ['http://a.b:80'],
      claims: [
        claim('http://a.b:80', 15000, 'x'),
        claim('http://a.b:80', 12000, 'y'),
        claim('http://a.b:80', 15000, 'z'),
      ],
      range: RANGE,
      random: noRandom,
    });
    expect(common.ports.get('http://a.b:80')).toBe(15000);
    expect(common.repairs).toEqual([
      {
        kind: 'url-two-ports',
        url: 'http://a.b:80',
        ports: [12000, 15000],
        kept: 15000,
        message: 'http://a.b:80 had forwarder ports 12000, 15000; it keeps 15000',
      },
    ]);
    const lowest = allocatePorts({
      urls: ['http://a.b:80'],
      claims: [claim('http://a.b:80', 15000, 'x'), claim('http://a.b:80', 12000, 'y')],
      range: RANGE,
      random: noRandom,
    });
    expect(lowest.ports.get('http://a.b:80')).toBe(12000);
  });

  it('frees the ports of URLs no longer desired, but avoids them while other ports are free', () => {
    const range = { min: 100, max: 101 };
    const gone = [claim('http://gone.b:80', 100)];
    const one = allocatePorts({ urls: ['http://a.b:80'], claims: gone, range, random: () => 0 });
    expect(one.ports.get('http://a.b:80')).toBe(101);
    const two = allocatePorts({
      urls: ['http://a.b:80', 'http://c.d:80'],
      claims: gone,
      range,
      random: () => 0,
    });
    expect([...two.ports.values()].sort()).toEqual([100, 101]);
    expect(two.exhausted).toEqual([]);
  });
});

describe('allocatePorts: exhaustion', () => {
  it('gives ports in priority order and lists the rest as exhausted', () => {
    const urls = ['http://a.b:80', 'http://c.d:80', 'http://e.f:80', 'http://g.h:80', 'http://i.j:80'];
    const r = allocatePorts({
      urls,
      claims: [claim('http://i.j:80', 20002)],
      range: { min: 20000, max: 20002 },
      random: seeded(11),
    });
    // The oldest claim keeps its port whatever its priority; the others fill in priority order.
    expect(r.ports.get('http://i.j:80')).toBe(20002);
    expect(new Set([r.ports.get('http://a.b:80'), r.ports.get('http://c.d:80')])).toEqual(
      new Set([20000, 20001]),
    );
    expect(r.exhausted).toEqual(['http://e.f:80', 'http://g.h:80']);
  });

  it('allocates 10,000 URLs in a range of 10,000 with no duplicates, and the 10,001st is exhausted', () => {
    const urls = Array.from({ length: 10_001 }, (_, i) => `tcp://s${i}.ns:${(i % 60000) + 1}`);
    const r = allocatePorts({ urls, claims: [], range: RANGE, random: seeded(2026) });
    expect(r.ports.size).toBe(10_000);
    expect(new Set(r.ports.values()).size).toBe(10_000);
    expect(r.exhausted).toEqual([urls[10_000]]);
    for (const p of r.ports.values()) {
      expect(p >= RANGE.min && p <= RANGE.max).toBe(true);
    }
  });

  it('keeps 5,000 existing claims and fills the rest of a full range around them', () => {
    const urls = Array.from({ length: 10_000 }, (_, i) => `http://s${i}.ns:80`);
    const claims = urls.slice(0, 5000).map((u, i) => claim(u, RANGE.min + 2 * i));
    const r = allocatePorts({ urls, claims, range: RANGE, random: seeded(7) });
    urls.slice(0, 5000).forEach((u, i) => expect(r.ports.get(u)).toBe(RANGE.min + 2 * i));
    expect(new Set(r.ports.values()).size).toBe(10_000);
    expect(r.exhausted).toEqual([]);
  });
});

describe('portClaims', () => {
  function internal(
    name: string,
    url: string | undefined,
    ports: ServicePort[],
    annotation?: string,
  ): Service {
    const annotations: Record<string, string> = {};
    if (url !== undefined) annotations[ENDPOINT_URL_ANNOTATION] = url;
    if (annotation !== undefined) annotations[PORTS_ANNOTATION] = annotation;
    return {
      metadata: {
        name,
        namespace: 'endpoint-binder',
        creationTimestamp: '2026-01-01T00:00:00Z',
        labels: { [ROLE_LABEL]: 'internal' },
        annotations,
      },
      spec: { type: 'ClusterIP', ports },
    };
  }

  it('reads each numeric targetPort, its URL from the port name and the Service hostname', () => {
    const svc = internal('ep-a', 'http://api.prod:80', [
      { name: 'http-80', protocol: 'TCP', port: 80, targetPort: 12000 },
      { name: 'tcp-5432', protocol: 'TCP', port: 5432, targetPort: 13000 },
      { name: 'web', port: 8080, targetPort: 'web' }, // a named targetPort is not ours
    ]);
    expect(portClaims([svc])).toEqual([
      {
        url: 'http://api.prod:80',
        port: 12000,
        service: { namespace: 'endpoint-binder', name: 'ep-a', creationTimestamp: '2026-01-01T00:00:00Z' },
      },
      {
        url: 'tcp://api.prod:5432',
        port: 13000,
        service: { namespace: 'endpoint-binder', name: 'ep-a', creationTimestamp: '2026-01-01T00:00:00Z' },
      },
    ]);
  });

  it('falls back to the ports annotation when the port name or the hostname does not tell', () => {
    const noUrl = internal(
      'ep-a',
      undefined,
      [{ name: 'http-80', port: 80, targetPort: 12000 }],
      '{"12000":"http://api.prod:80"}',
    );
    const oddName = internal(
      'ep-b',
      'http://api.prod:80',
      [
        { name: 'renamed', port: 5432, targetPort: 13000 },
        { name: 'http-81', port: 80, targetPort: 14000 },
      ],
      '{"13000":"tcp://api.prod:5432","14000":"http://api.prod:80"}',
    );
    expect(portClaims([noUrl, oddName]).map((c) => [c.url, c.port])).toEqual([
      ['http://api.prod:80', 12000],
      ['tcp://api.prod:5432', 13000],
      ['http://api.prod:80', 14000],
    ]);
  });

  it('ignores alias Services, unknown ports and a malformed annotation', () => {
    const alias: Service = {
      metadata: { name: 'api', namespace: 'prod', labels: { [ROLE_LABEL]: 'alias' } },
      spec: { type: 'ExternalName', ports: [{ name: 'http-80', port: 80, targetPort: 80 }] },
    };
    const broken = internal('ep-c', 'nonsense', [{ name: 'x', port: 1, targetPort: 12000 }], '{not json');
    expect(portClaims([alias, broken])).toEqual([]);
  });
});
