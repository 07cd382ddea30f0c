import { describe, expect, it } from 'vitest';
import { ForwarderConfig } from '../../src/forwarder/config.js';
import { desiredListeners, sameRoutes } from '../../src/forwarder/desired-listeners.js';
import { idleSweepMs, rebindDelayMs } from '../../src/forwarder/listeners.js';
import {
  decideRetry,
  DEFAULT_MAX_ATTEMPTS,
  isRetryable,
  retryDelayMs,
  spreadTimeout,
  attemptTimeoutMs,
  noTurnMessage,
} from '../../src/forwarder/retry.js';
import { resolveIngressAddress } from '../../src/forwarder/ingress-address.js';
import { installRecordConfigMap } from '../../src/binding/ownership/index.js';
import { isLoopbackHost } from '../../src/net/host-port.js';
import { resolveMockConfig } from '../../src/mock/config.js';
import { IDENTITY, internalService } from './helpers.js';

describe('desiredListeners', () => {
  it('unions the ports of every Service, each with its URL', () => {
    const d = desiredListeners(
      [
        internalService('ep-b', { 10002: 'tcp://api.prod:5432', 10001: 'http://api.prod:80' }),
        internalService('ep-a', { 10001: 'http://api.prod:80' }),
        internalService('ep-c', { 10003: 'http://web.shop:80' }),
      ],
      IDENTITY,
    );
    expect(d.problems).toEqual([]);
    expect([...d.routes]).toEqual([
      [10001, { url: 'http://api.prod:80' }],
      [10002, { url: 'tcp://api.prod:5432' }],
      [10003, { url: 'http://web.shop:80' }],
    ]);
  });

  it('takes no claim from an internal Service the install record does not list (a hand-made one)', () => {
    const ours = { ...internalService('ep-a', { 10001: 'http://api.prod:80' }) };
    ours.metadata = { ...ours.metadata, uid: 'u-ours' };
    const forged = internalService('ep-forged', { 10001: 'http://evil.prod:80' });
    forged.metadata = { ...forged.metadata, uid: 'u-forged' };
    const d = desiredListeners([forged, ours], IDENTITY, { recorded: new Set(['u-ours']) });
    expect([...d.routes]).toEqual([[10001, { url: 'http://api.prod:80' }]]);
    expect(d.problems).toEqual([
      {
        service: 'endpoint-binder/ep-forged',
        kind: 'foreign',
        message: 'not listed in the install record (not created by the controller); claims no port',
      },
    ]);
    // No list yet (an upgrade): both count, and the clash is a port conflict as before.
    expect(desiredListeners([forged, ours], IDENTITY).routes.size).toBe(0);
  });

  it('skips a port listed with two URLs (whatever the order) and reports it', () => {
    const one = internalService('ep-1', { 10001: 'http://a.b:80', 10002: 'tcp://a.b:81' });
    const two = internalService('ep-2', { 10001: 'tcp://c.d:80' });
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
    const badPorts = internalService('ep-bad', { 10001: 'http://a.b:80' });
    badPorts.metadata.annotations!['endpoint-binder.io/ports'] = '{"10001":"http://a.b"}';
    const good = internalService('ep-ing', { 10002: 'http://c.d:80' });
    const foreign = internalService(
      'ep-x',
      { 10003: 'http://e.f:80' },
      {
        release: 'other',
        operatorNamespace: 'endpoint-binder',
      },
    );
    const alias = internalService('ep-alias', { 10004: 'http://g.h:80' });
    alias.metadata.labels!['endpoint-binder.io/role'] = 'alias';
    const d = desiredListeners([badPorts, good, foreign, alias], IDENTITY);
    expect([...d.routes]).toEqual([[10002, { url: 'http://c.d:80' }]]);
    expect(d.problems.map((p) => [p.service, p.kind])).toEqual([
      ['endpoint-binder/ep-alias', 'foreign'],
      ['endpoint-binder/ep-bad', 'ports-annotation'],
      ['endpoint-binder/ep-x', 'foreign'],
    ]);
    expect(d.problems[1]!.message).toContain('canonical');
  });

  it('never takes an ingress address from a Service: an ingress annotation changes nothing', () => {
    const svc = internalService('ep-1', { 10001: 'http://a.b:80' });
    svc.metadata.annotations!['endpoint-binder.io/ingress'] = 'evil.example:443';
    expect([...desiredListeners([svc], IDENTITY).routes]).toEqual([[10001, { url: 'http://a.b:80' }]]);
  });

  it("refuses ports outside portRange and the forwarder's own ports, keeping the rest", () => {
    const svc = internalService('ep-1', {
      8081: 'http://a.b:80',
      10001: 'http://a.b:81',
      40000: 'http://a.b:82',
    });
    const d = desiredListeners([svc], IDENTITY, { portRange: { min: 8000, max: 20000 }, ownPorts: [8081] });
    expect([...d.routes.keys()]).toEqual([10001]);
    expect(d.problems.map((p) => [p.kind, p.port])).toEqual([
      ['own-port', 8081],
      ['port-range', 40000],
    ]);
    expect(d.problems[1]!.message).toBe('port 40000 is outside portRange 8000-20000; no listener');
  });

  it('sameRoutes compares ports and URLs', () => {
    const a = new Map([[1, { url: 'u' }]]);
    expect(sameRoutes(a, new Map([[1, { url: 'u' }]]))).toBe(true);
    expect(sameRoutes(a, new Map([[1, { url: 'v' }]]))).toBe(false);
    expect(sameRoutes(a, new Map([[2, { url: 'u' }]]))).toBe(false);
    expect(sameRoutes(a, new Map())).toBe(false);
  });
});

describe('ingress address (config or install record only)', () => {
  const record = (data: Record<string, string>, labels = true) => {
    const cm = installRecordConfigMap(IDENTITY, {});
    cm.data = data;
    if (!labels) cm.metadata.labels = {};
    return cm;
  };

  it('the config wins; else the install record; else none, with the reason', () => {
    const rec = record({ 'ingress-address': 'ingress.example:443', 'operator-id': 'k8sop_1' });
    // The config pins the ingress: a record naming another destination is refused, not followed.
    expect(resolveIngressAddress('127.0.0.1:9', rec, IDENTITY, { plainTcp: false })).toMatchObject({
      address: '127.0.0.1:9',
      source: 'config',
      refused: 'ingress.example:443',
    });
    expect(resolveIngressAddress('INGRESS.example:443', rec, IDENTITY, { plainTcp: false })).toEqual({
      address: 'INGRESS.example:443',
      source: 'config',
    });
    // Pinned by the first record's host: another host is refused, another port on it followed.
    const pin = { learnedHost: 'ingress.example' };
    expect(
      resolveIngressAddress(undefined, record({ 'ingress-address': 'evil.example:443' }), IDENTITY, {
        plainTcp: false,
        pin,
      }),
    ).toMatchObject({ address: undefined, refused: 'evil.example:443' });
    expect(
      resolveIngressAddress(undefined, record({ 'ingress-address': 'ingress.example:8443' }), IDENTITY, {
        plainTcp: false,
        pin,
      }),
    ).toMatchObject({ address: 'ingress.example:8443', source: 'install-record' });
    expect(resolveIngressAddress(undefined, rec, IDENTITY, { plainTcp: false })).toEqual({
      address: 'ingress.example:443',
      source: 'install-record',
      operatorId: 'k8sop_1',
    });
    const none = resolveIngressAddress(undefined, undefined, IDENTITY, { plainTcp: false });
    expect(none.address).toBeUndefined();
    expect(none.problem).toContain('ConfigMap eb-install not found');
  });

  it('ignores a record without the install labels, a malformed address, and a non-loopback one for plain TCP', () => {
    const forged = resolveIngressAddress(
      undefined,
      record({ 'ingress-address': 'evil.example:443' }, false),
      IDENTITY,
      { plainTcp: false },
    );
    expect(forged.address).toBeUndefined();
    expect(forged.problem).toContain("lacks this install's labels");
    const bad = resolveIngressAddress(undefined, record({ 'ingress-address': 'no-port' }), IDENTITY, {
      plainTcp: false,
    });
    expect(bad.problem).toContain('data.ingress-address');
    const plain = resolveIngressAddress(
      undefined,
      record({ 'ingress-address': 'ingress.example:443' }),
      IDENTITY,
      { plainTcp: true },
    );
    expect(plain.problem).toContain('not a loopback address');
    expect(
      resolveIngressAddress(undefined, record({ 'ingress-address': '127.0.0.1:7000' }), IDENTITY, {
        plainTcp: true,
      }).address,
    ).toBe('127.0.0.1:7000');
  });
});

describe('retry policy', () => {
  it('retries transient codes only, within the attempts and the budget', () => {
    for (const code of [
      'ERR_730',
      'ERR_731',
      'ERR_740',
      'ERR_741',
      'ERR_742',
      'ERR_743',
      'ERR_790',
      'ERR_793',
    ])
      expect(isRetryable(code)).toBe(true);
    for (const code of [
      'ERR_700',
      'ERR_703',
      'ERR_710',
      'ERR_720',
      'ERR_721',
      'ERR_722',
      'ERR_732',
      'ERR_733',
      'ERR_792',
      'ERR_794',
      'ERR_795',
    ]) {
      expect(isRetryable(code)).toBe(false);
    }
    const half = () => 0.5;
    expect(decideRetry('ERR_730', 1, 10_000, half)).toEqual({ retry: true, delayMs: 38 });
    expect(decideRetry('ERR_730', DEFAULT_MAX_ATTEMPTS, 10_000, half)).toEqual({
      retry: false,
      reason: 'attempts',
    });
    expect(decideRetry('ERR_730', 3, 10_000, half, 3)).toEqual({ retry: false, reason: 'attempts' });
    expect(decideRetry('ERR_730', 1, 60, half)).toEqual({ retry: false, reason: 'budget' });
    expect(decideRetry('ERR_721', 1, 10_000, half)).toEqual({ retry: false, reason: 'not_retryable' });
    // "Retry at once": no growing delay after an eviction.
    expect(decideRetry('ERR_742', 5, 10_000, () => 0)).toEqual({ retry: true, delayMs: 50 });
  });

  it('backs off exponentially to a cap, with jitter downwards (the shared backoff)', () => {
    expect([1, 2, 3, 5, 6, 9].map((a) => retryDelayMs(a, () => 0))).toEqual([50, 100, 200, 800, 1000, 1000]);
    expect([1, 2, 3].map((a) => retryDelayMs(a, () => 1))).toEqual([25, 50, 100]);
    expect([1, 2, 3, 10, 20].map(rebindDelayMs)).toEqual([100, 200, 400, 30_000, 30_000]);
  });
});

describe('idleSweepMs', () => {
  it('looks every tenth of the idle timeout, at least every second and at most every 10 ms', () => {
    expect([1, 50, 400, 5_000, 300_000].map(idleSweepMs)).toEqual([10, 10, 40, 500, 1000]);
  });
});

describe('ForwarderConfig', () => {
  it('fills the documented defaults', () => {
    const c = ForwarderConfig.parse({ releaseName: 'eb', operatorNamespace: 'ops' });
    expect(c).toEqual({
      releaseName: 'eb',
      operatorNamespace: 'ops',
      listenHost: '0.0.0.0',
      portRange: { min: 1024, max: 65535 },
      dialOn: { http: 'data', tcp: 'accept' },
      ingress: {
        tls: true,
        protocol: 'auto',
        sessions: 2,
        streamWindowBytes: 512 * 1024,
        sharedWindowBytes: 16 * 1024 * 1024,
      },
      limits: {
        maxConnections: 10_000,
        maxConnectionsPerPort: 2_000,
        maxSilentDialsPerPort: 32,
        maxConcurrentDials: 1024,
        maxIngressConnectionsPerPort: 512,
        maxIngressConnectionsPerSource: 512,
        maxDialAttempts: 6,
        acceptBacklog: 4096,
        dialTimeoutMs: 8_000,
        idleTimeoutMs: 300_000,
        prefaceTimeoutMs: 10_000,
      },
      drain: { delaySeconds: 5, timeoutSeconds: 25 },
      http: { listen: '0.0.0.0:8081' },
      logLevel: 'info',
    });
  });

  it("waits for the ingress's reply longer than the ingress waits for an upstream, so its ERR_731 arrives", () => {
    // bad-gateway.test shows the mechanism scaled down; this keeps the defaults in that order, with
    // 2 s left for the connect, the TLS handshake and the round trips even when the spread
    // (retry.ts spreadTimeout) draws the shortest timeout.
    const forwarder = ForwarderConfig.parse({ releaseName: 'eb', operatorNamespace: 'ops' }).limits;
    const ingress = resolveMockConfig().ingress;
    const shortest = spreadTimeout(forwarder.dialTimeoutMs, () => 1);
    expect(shortest).toBeGreaterThanOrEqual(ingress.dial_timeout_ms + 2_000);
    expect(forwarder.prefaceTimeoutMs).toBeGreaterThanOrEqual(forwarder.dialTimeoutMs);
  });

  it('spreads a timeout over the last tenth of its span, never beyond the configured value', () => {
    expect(spreadTimeout(10_000, () => 0)).toBe(10_000);
    expect(spreadTimeout(10_000, () => 0.5)).toBe(9_500);
    expect(spreadTimeout(10_000, () => 0.999)).toBeCloseTo(9_001, 5);
    // A random source out of range is clamped.
    expect(spreadTimeout(10_000, () => 7)).toBe(9_000);
    expect(spreadTimeout(10_000, () => -1)).toBe(10_000);
    // An attempt: the spread dial timeout within what is left of the deadline, at least 1 ms.
    expect(attemptTimeoutMs(8_000, 20_000, () => 1)).toBe(7_200);
    expect(attemptTimeoutMs(8_000, 3_000.4, () => 0)).toBe(3_000);
    expect(attemptTimeoutMs(8_000, -5, () => 0)).toBe(1);
    // A client that got no turn is told its own figures, not only the setting's.
    expect(noTurnMessage(9_412.4, 9_530.6, { prefaceTimeoutMs: 10_000 })).toBe(
      "no turn to dial the ingress after waiting 9412 ms of this client's 9531 ms (limits.prefaceTimeoutMs 10000 ms, spread over its last tenth)",
    );
    // A client of an endpoint whose upstream is down is told why its turn did not come.
    expect(noTurnMessage(9_412.4, 9_530.6, { prefaceTimeoutMs: 10_000 }, true)).toBe(
      "no turn to dial the ingress after waiting 9412 ms of this client's 9531 ms (limits.prefaceTimeoutMs 10000 ms, spread over its last tenth); this endpoint's upstream was down at its latest dials (ERR_730/731), so it has 4 dials at a time awaiting the ingress's answer until one reaches the upstream",
    );
    // 1,000 clients' deadlines cover the tenth, not one instant.
    const draws = Array.from({ length: 1_000 }, () => spreadTimeout(8_000, Math.random));
    expect(Math.max(...draws) - Math.min(...draws), 'spread of 1,000 draws, ms').toBeGreaterThan(700);
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
