import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  dataPathCell,
  dataPathDocument,
  dataPathNotes,
  podTarget,
  type DataPathSnapshot,
  type ForwarderPod,
  type ForwarderRead,
} from '../../src/controller/decide/data-path.js';
import { readForwarderStatus } from '../../src/controller/forwarder-health.js';
import { StatusDocumentSchema, type StatusDocument } from '../../src/controller/decide/status.js';
import {
  ForwarderStatusSchema,
  forwarderStatus,
  type ForwarderStatus,
} from '../../src/forwarder/forwarder-status.js';
import { UrlHealthRecorder } from '../../src/forwarder/url-health.js';

/**
 * The data-path decisions (src/controller/decide/data-path.ts) as tables: the cell of an endpoint from
 * what the forwarders answered, the header notes, where a forwarder pod is read; the documents'
 * round trips through their schemas; and the reader's refusals of what is not a forwarder.
 */

const T0 = Date.parse('2026-11-27T12:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

function status(
  now: number,
  rows: Partial<ForwarderStatus['urls'][number]>[],
  ready = true,
): ForwarderStatus {
  return {
    ready,
    reasons: ready ? [] : ['ingress refused the authtoken'],
    now: iso(now),
    urls: rows.map((r) => ({
      port: 10000,
      url: 'tcp://a.prod:7000',
      listener: 'listening',
      dataPath: 'ignored: recomputed from the times',
      windowMinutes: 5,
      successes: 0,
      failures: 0,
      ...r,
    })),
  };
}
const read = (name: string, readAt: number, s: ForwarderStatus): ForwarderRead => ({
  name,
  url: `http://${name}/status`,
  readAt,
  answer: { ok: true, status: s },
});
const unread = (name: string, problem = 'ECONNREFUSED'): ForwarderRead => ({
  name,
  readAt: T0,
  answer: { ok: false, problem },
});
const snap = (forwarders: ForwarderRead[], problem?: string): DataPathSnapshot => ({
  gatheredAt: T0,
  forwarders,
  ...(problem ? { problem } : {}),
});

const EP = { url: 'tcp://a.prod:7000', targetPort: 10000 };
const failure = (at: number, code = 'ERR_730') => ({
  at: iso(at),
  code,
  title: "The endpoint's upstream refused the connection.",
  message: 'refused',
});

describe('dataPathCell', () => {
  const cases: {
    name: string;
    e?: typeof EP | { url: string };
    s: DataPathSnapshot | undefined;
    now?: number;
    want: string;
  }[] = [
    {
      name: 'an endpoint without a forwarder port has no data path',
      e: { url: EP.url },
      s: undefined,
      want: '-',
    },
    {
      name: 'before the first gathering',
      s: undefined,
      want: 'unknown (the forwarders have not been read yet)',
    },
    {
      name: 'the forwarders could not be listed',
      s: snap([], 'cannot list the forwarder pods in ns (sel): HTTP 403'),
      want: 'unknown (cannot list the forwarder pods in ns (sel): HTTP 403)',
    },
    { name: 'no forwarder exists', s: snap([]), want: 'unknown (no forwarder found)' },
    {
      name: 'none could be read: unknown, never ok',
      s: snap([unread('a'), unread('b')]),
      want: 'unknown (no forwarder read)',
    },
    {
      name: 'a success aged on the forwarder clock plus the time since the read',
      s: snap([read('a', T0, status(T0, [{ lastSuccessAt: iso(T0 - 2_000) }]))]),
      now: T0 + 3_000,
      want: 'ok 5s ago',
    },
    {
      name: 'a forwarder clock an hour ahead does not age the observation',
      s: snap([read('a', T0, status(T0 + 3_600_000, [{ lastSuccessAt: iso(T0 + 3_600_000 - 4_000) }]))]),
      now: T0,
      want: 'ok 4s ago',
    },
    {
      name: 'the newest observation of any forwarder wins (a failure after the other one’s success)',
      s: snap([
        read('a', T0, status(T0, [{ lastSuccessAt: iso(T0 - 60_000) }])),
        read('b', T0, status(T0, [{ lastFailure: failure(T0 - 7_000) }])),
      ]),
      now: T0,
      want: 'upstream refused (ERR_730) 7s ago',
    },
    {
      name: 'a forwarder with no traffic does not hide another’s observation',
      s: snap([
        read('a', T0, status(T0, [{}])),
        read('b', T0, status(T0, [{ lastSuccessAt: iso(T0 - 1_000) }])),
      ]),
      now: T0,
      want: 'ok 1s ago',
    },
    {
      name: 'only some read: the cell says how many',
      s: snap([read('a', T0, status(T0, [{}])), unread('b')]),
      now: T0,
      want: 'no traffic yet (1 of 2 forwarders read)',
    },
    {
      name: 'a pod that does not run is not counted among the forwarders to read',
      s: snap([
        read('a', T0, status(T0, [{}])),
        { ...unread('b', 'the pod is Pending, not Running'), notRunning: true },
      ]),
      now: T0,
      want: 'no traffic yet',
    },
    {
      name: 'every forwarder found is not running: a fact, not unknown',
      s: snap([{ ...unread('b', 'the pod is Pending, not Running'), notRunning: true }]),
      want: 'no forwarder running',
    },
    {
      name: 'read, but no forwarder serves the port or the URL',
      s: snap([read('a', T0, status(T0, [{ port: 10001, url: 'tcp://other.prod:7000' }]))]),
      want: 'not served by the forwarders read',
    },
    {
      name: 'matched by URL when the port is not (yet) the one the forwarder serves',
      s: snap([read('a', T0, status(T0, [{ port: 10001, lastSuccessAt: iso(T0) }]))]),
      now: T0,
      want: 'ok 0s ago',
    },
  ];
  for (const c of cases)
    it(c.name, () => {
      expect(dataPathCell(c.e ?? EP, c.s, c.now ?? T0)).toBe(c.want);
    });
});

describe('dataPathNotes', () => {
  const cases: { name: string; s: DataPathSnapshot | undefined; want: string[] }[] = [
    {
      name: 'not gathered yet',
      s: undefined,
      want: ['data path: unknown (the forwarders have not been read yet)'],
    },
    {
      name: 'not listed',
      s: snap([], 'cannot list pods: 403'),
      want: ['data path: unknown (cannot list pods: 403)'],
    },
    {
      name: 'each unreadable forwarder unknown with its reason, each not ready one with its reasons',
      s: snap([
        read('pod ok', T0, status(T0, [])),
        unread('pod gone', 'no answer within 3000 ms'),
        read('pod sad', T0, status(T0, [], false)),
        { ...unread('pod new', 'the pod is Pending, not Running'), notRunning: true },
      ]),
      want: [
        'data path: forwarder pod gone unknown (no answer within 3000 ms)',
        'data path: forwarder pod sad not ready: ingress refused the authtoken',
        'data path: forwarder pod new not running (the pod is Pending, not Running)',
      ],
    },
    { name: 'all read and ready: nothing to say', s: snap([read('pod ok', T0, status(T0, []))]), want: [] },
  ];
  for (const c of cases)
    it(c.name, () => {
      expect(dataPathNotes(dataPathDocument(c.s))).toEqual(c.want);
    });
});

describe('podTarget', () => {
  const pod = (over: {
    phase?: string;
    podIP?: string;
    ports?: { name?: string; containerPort: number }[];
  }): ForwarderPod => ({
    metadata: { name: 'f-1' },
    spec: { containers: [{ ports: over.ports ?? [{ name: 'http', containerPort: 8081 }] }] },
    status: { ...(over.phase ? { phase: over.phase } : {}), ...(over.podIP ? { podIP: over.podIP } : {}) },
  });
  const cases: { name: string; p: ForwarderPod; want: ReturnType<typeof podTarget> }[] = [
    {
      name: 'a running pod: its http port on its IP',
      p: pod({ phase: 'Running', podIP: '10.0.0.7' }),
      want: { name: 'pod f-1', url: 'http://10.0.0.7:8081/status' },
    },
    {
      name: 'an IPv6 pod IP in brackets',
      p: pod({ phase: 'Running', podIP: 'fd00::7' }),
      want: { name: 'pod f-1', url: 'http://[fd00::7]:8081/status' },
    },
    {
      name: 'the http port by name, not the first one',
      p: pod({
        phase: 'Running',
        podIP: '10.0.0.7',
        ports: [{ containerPort: 10000 }, { name: 'http', containerPort: 9 }],
      }),
      want: { name: 'pod f-1', url: 'http://10.0.0.7:9/status' },
    },
    {
      name: 'no port named http',
      p: pod({ phase: 'Running', podIP: '10.0.0.7', ports: [{ name: 'metrics', containerPort: 1 }] }),
      want: { name: 'pod f-1', problem: 'the pod has no container port named http' },
    },
    {
      name: 'pending',
      p: pod({ phase: 'Pending' }),
      want: { name: 'pod f-1', problem: 'the pod is Pending, not Running', notRunning: true },
    },
    {
      name: 'running without an IP',
      p: pod({ phase: 'Running' }),
      want: { name: 'pod f-1', problem: 'the pod has no IP yet' },
    },
  ];
  for (const c of cases)
    it(c.name, () => {
      expect(podTarget(c.p)).toEqual(c.want);
    });
});

describe('schema round trips', () => {
  it('a status document with its data path survives JSON and StatusDocumentSchema unchanged', () => {
    const s = snap([read('pod a', T0, status(T0, [{ lastSuccessAt: iso(T0) }])), unread('pod b')]);
    const doc: StatusDocument = {
      operator: { id: 'op_1', ingress: 'ingress.example:443' },
      install: { release: 'eb', operatorNamespace: 'ns' },
      selector: 'true',
      bindingsEnabled: true,
      leader: true,
      ready: true,
      notificationsLive: true,
      lastFullSync: iso(T0),
      counts: { projected: 1 },
      dataPath: dataPathDocument(s),
      endpoints: [
        {
          id: 'ep_1',
          url: EP.url,
          state: 'projected',
          reason: '',
          targetPort: 10000,
          dataPath: dataPathCell(EP, s, T0),
        },
      ],
    };
    const back = StatusDocumentSchema.parse(JSON.parse(JSON.stringify(doc)));
    expect(back).toEqual(doc);
    expect(back.dataPath?.forwarders).toEqual([
      { name: 'pod a', url: 'http://pod a/status', read: true, ready: true, reasons: [] },
      { name: 'pod b', read: false, problem: 'ECONNREFUSED' },
    ]);
    expect(back.endpoints[0]?.dataPath).toBe('ok 0s ago (1 of 2 forwarders read)');
  });

  it('a document from an older controller (no data path) still parses', () => {
    const old = {
      operator: null,
      install: { release: 'eb', operatorNamespace: 'ns' },
      selector: 'true',
      bindingsEnabled: true,
      leader: false,
      ready: false,
      notificationsLive: false,
      lastFullSync: null,
      counts: {},
      endpoints: [],
    };
    expect(StatusDocumentSchema.parse(old).dataPath).toBeUndefined();
  });

  it('what a forwarder answers survives JSON and ForwarderStatusSchema unchanged', () => {
    const health = new UrlHealthRecorder();
    health.record('tcp://a.prod:7000', { ok: false, code: 'ERR_731', message: 'no route' }, T0 - 1_000);
    health.record('tcp://a.prod:7000', { ok: true }, T0 - 5_000);
    const answer = forwarderStatus(
      { ready: true, reasons: [] },
      [{ port: 10000, url: 'tcp://a.prod:7000', state: 'bound' }],
      health,
      T0,
    );
    expect(ForwarderStatusSchema.parse(JSON.parse(JSON.stringify(answer)))).toEqual(answer);
    const s = snap([read('a', T0, answer)]);
    expect(dataPathCell(EP, s, T0)).toBe('upstream unreachable (ERR_731) 1s ago');
  });
});

describe('readForwarderStatus refuses what is not a forwarder status document', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    server = undefined;
  });
  const serve = async (handler: Parameters<typeof createServer>[1]): Promise<string> => {
    server = createServer(handler);
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/status`;
  };

  it('JSON of another shape', async () => {
    const url = await serve((_q, res) => res.end(JSON.stringify({ ready: 'yes', urls: 5 })));
    expect(await readForwarderStatus(url, 2_000)).toEqual({
      ok: false,
      problem: 'not a forwarder status document (is it a forwarder HTTP server?)',
    });
  });
  it('not JSON', async () => {
    const url = await serve((_q, res) => res.end('<html>'));
    expect(await readForwarderStatus(url, 2_000)).toEqual({
      ok: false,
      problem: 'did not answer JSON (is it a forwarder HTTP server?)',
    });
  });
  it('an error status', async () => {
    const url = await serve((_q, res) => {
      res.statusCode = 404;
      res.end('{}');
    });
    expect(await readForwarderStatus(url, 2_000)).toEqual({ ok: false, problem: 'HTTP 404' });
  });
  it('no answer within the timeout: unknown with that reason', async () => {
    const url = await serve(() => undefined);
    expect(await readForwarderStatus(url, 200)).toEqual({ ok: false, problem: 'no answer within 200 ms' });
  });
});
