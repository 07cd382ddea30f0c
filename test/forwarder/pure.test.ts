import { describe, expect, it } from 'vitest';
import { ForwarderConfig } from '../../src/forwarder/config.js';
import { desiredListeners, sameRoutes } from '../../src/forwarder/desired-listeners.js';
import { rebindDelayMs } from '../../src/forwarder/listeners.js';
import { decideRetry, isRetryable, MAX_ATTEMPTS, retryDelayMs } from '../../src/forwarder/retry.js';
import { isLoopbackHost } from '../../src/net/host-port.js';
import { IDENTITY, internalService } from './helpers.js';

describe('desiredListeners', () => {
  it('unions the ports of every Service, each with its URL and ingress', () => {
    const d = desiredListeners(
      [
        internalService(
          'ep-b',
          { 10002: 'tcp://api.prod:5432', 10001: 'http://api.prod:80' },
          'ing.example:443',
        ),
        internalService('ep-a', { 10001: 'http://api.prod:80' }, 'ing.example:443'),
        internalService('ep-c', { 10003: 'http://web.shop:80' }, undefined),
      ],
      IDENTITY,
    );
    expect(d.problems).toEqual([]);
    expect([...d.routes]).toEqual([
      [10001, { url: 'http://api.prod:80', ingress: 'ing.example:443' }],
      [10002, { url: 'tcp://api.prod:5432', ingress: 'ing.example:443' }],
      [10003, { url: 'http://web.shop:80', ingress: undefined }],
    ]);
  });

  it('skips a port listed with two URLs (whatever the order) and reports it', () => {
    const one = internalService('ep-1', { 10001: 'http://a.b:80', 10002: 'tcp://a.b:81' }, 'i:1');
    const two = internalService('ep-2', { 10001: 'tcp://c.d:80' }, 'i:1');
    for (const services of [
      [one, two],
      [two, one],
    ]) {
      const d = desiredListeners(services, IDENTITY);
      expect([...d.routes.keys()]).toEqual([10002]);
      expect(d.problems).toEqual([
        {
          service: 'endpoint-binder/ep-1, endpoint-binder/ep-2',
          kind: 'port-conflict',
          port: 10001,
          message:
            'port 10001 is listed with different URLs (http://a.b:80, tcp://c.d:80); no listener until they agree',
        },
      ]);
    }
  });

  it('reports and skips malformed annotations, and Services that are not this install internal ones', () => {
    const badPorts = internalService('ep-bad', { 10001: 'http://a.b:80' }, 'i:1');
    badPorts.metadata.annotations!['endpoint-binder.io/ports'] = '{"10001":"http://a.b"}';
    const badIngress = internalService('ep-ing', { 10002: 'http://c.d:80' }, 'no-port');
    const foreign = internalService('ep-x', { 10003: 'http://e.f:80' }, 'i:1', {
      release: 'other',
      operatorNamespace: 'endpoint-binder',
    });
    const alias = internalService('ep-alias', { 10004: 'http://g.h:80' }, 'i:1');
    alias.metadata.labels!['endpoint-binder.io/role'] = 'alias';
    const d = desiredListeners([badPorts, badIngress, foreign, alias], IDENTITY);
    expect([...d.routes]).toEqual([[10002, { url: 'http://c.d:80', ingress: undefined }]]);
    expect(d.problems.map((p) => [p.service, p.kind])).toEqual([
      ['endpoint-binder/ep-alias', 'foreign'],
      ['endpoint-binder/ep-bad', 'ports-annotation'],
      ['endpoint-binder/ep-ing', 'ingress-annotation'],
      ['endpoint-binder/ep-x', 'foreign'],
    ]);
    expect(d.problems[1]!.message).toContain('canonical');
  });

  it('lets the configured address override the annotation, and rejects a non-loopback annotation for plain TCP', () => {
    const svc = internalService('ep-1', { 10001: 'http://a.b:80' }, 'ingress.example:443');
    expect(
      desiredListeners([svc], IDENTITY, { ingressOverride: '127.0.0.1:9' }).routes.get(10001)?.ingress,
    ).toBe('127.0.0.1:9');
    const plain = desiredListeners([svc], IDENTITY, { plainTcp: true });
    expect(plain.routes.get(10001)?.ingress).toBeUndefined();
    expect(plain.problems[0]?.message).toContain('not a loopback address');
    const loop = internalService('ep-2', { 10001: 'http://a.b:80' }, '127.0.0.1:7000');
    expect(desiredListeners([loop], IDENTITY, { plainTcp: true }).routes.get(10001)?.ingress).toBe(
      '127.0.0.1:7000',
    );
  });

  it('sameRoutes compares ports, URLs and ingresses', () => {
    const a = new Map([[1, { url: 'u', ingress: 'i:1' }]]);
    expect(sameRoutes(a, new Map([[1, { url: 'u', ingress: 'i:1' }]]))).toBe(true);
    expect(sameRoutes(a, new Map([[1, { url: 'u', ingress: 'i:2' }]]))).toBe(false);
    expect(sameRoutes(a, new Map([[2, { url: 'u', ingress: 'i:1' }]]))).toBe(false);
    expect(sameRoutes(a, new Map())).toBe(false);
  });
});

describe('retry policy', () => {
  it('retries transient codes only, within MAX_ATTEMPTS and the budget', () => {
    for (const code of ['ERR_730', 'ERR_731', 'ERR_740', 'ERR_741', 'ERR_790', 'ERR_793'])
      expect(isRetryable(code)).toBe(true);
    for (const code of [
      'ERR_700',
      'ERR_703',
      'ERR_710',
      'ERR_720',
      'ERR_721',
      'ERR_722',
      'ERR_792',
      'ERR_794',
    ]) {
      expect(isRetryable(code)).toBe(false);
    }
    const half = () => 0.5;
    expect(decideRetry('ERR_730', 1, 10_000, half)).toEqual({ retry: true, delayMs: 38 });
    expect(decideRetry('ERR_730', MAX_ATTEMPTS, 10_000, half)).toEqual({ retry: false, reason: 'attempts' });
    expect(decideRetry('ERR_730', 1, 60, half)).toEqual({ retry: false, reason: 'budget' });
    expect(decideRetry('ERR_721', 1, 10_000, half)).toEqual({ retry: false, reason: 'not_retryable' });
  });

  it('backs off exponentially with jitter downwards', () => {
    expect([1, 2, 3].map((a) => retryDelayMs(a, () => 0))).toEqual([50, 100, 200]);
    expect([1, 2, 3].map((a) => retryDelayMs(a, () => 1))).toEqual([25, 50, 100]);
    expect([1, 2, 3, 10, 20].map(rebindDelayMs)).toEqual([100, 200, 400, 30_000, 30_000]);
  });
});

describe('ForwarderConfig', () => {
  it('fills the documented defaults', () => {
    const c = ForwarderConfig.parse({ releaseName: 'eb', operatorNamespace: 'ops' });
    expect(c).toEqual({
      releaseName: 'eb',
      operatorNamespace: 'ops',
      listenHost: '0.0.0.0',
      ingress: { tls: true },
      limits: {
        maxConnections: 10_000,
        maxConnectionsPerPort: 2_000,
        dialTimeoutMs: 5_000,
        idleTimeoutMs: 300_000,
        prefaceTimeoutMs: 10_000,
      },
      drain: { delaySeconds: 5, timeoutSeconds: 25 },
      http: { listen: '0.0.0.0:8081' },
      logLevel: 'info',
    });
  });

  it('reports every bad field, by path', () => {
    const r = ForwarderConfig.safeParse({
      releaseName: 'Bad_Name',
      ingress: { address: 'no-port', tls: 'yes' },
      limits: { maxConnections: 0, dialTimeoutMs: -1 },
      authtoken: 'never here',
    });
    expect(r.success).toBe(false);
    const paths = r.error!.issues.map((i) => i.path.join('.') || i.message);
    expect(paths).toEqual(
      expect.arrayContaining([
        'releaseName',
        'operatorNamespace',
        'ingress.address',
        'ingress.tls',
        'limits.maxConnections',
        'limits.dialTimeoutMs',
      ]),
    );
    expect(JSON.stringify(r.error!.issues)).toContain('authtoken');
  });

  it('allows plain TCP only to a loopback ingress, and per-port caps not above the total', () => {
    const r = ForwarderConfig.safeParse({
      releaseName: 'eb',
      operatorNamespace: 'ops',
      ingress: { address: 'ingress.example:443', tls: false },
      limits: { maxConnections: 10, maxConnectionsPerPort: 11 },
    });
    expect(r.error?.issues.map((i) => i.path.join('.'))).toEqual([
      'ingress.tls',
      'limits.maxConnectionsPerPort',
    ]);
    expect(
      ForwarderConfig.safeParse({
        releaseName: 'eb',
        operatorNamespace: 'ops',
        ingress: { address: '[::1]:7', tls: false },
      }).success,
    ).toBe(true);
    expect(['127.0.0.1', '127.9.9.9', '::1', '[::1]', 'localhost'].every(isLoopbackHost)).toBe(true);
    expect(['10.0.0.1', '128.0.0.1', 'example.com', '::2'].some(isLoopbackHost)).toBe(false);
  });
});
