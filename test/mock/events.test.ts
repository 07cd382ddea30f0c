import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { operatorEventHub } from '../../src/mock/events/hub.js';
import { startTestMock, twoAccounts, type TestMock } from '../helpers/mock-api.js';
import { eventually, openRawStream, type RawStream } from '../helpers/sse.js';

const deployment = { name: 'binder', namespace: 'binder-system' };
const open: RawStream[] = [];
const mocks: TestMock[] = [];

afterEach(async () => {
  for (const s of open.splice(0)) s.close();
  await Promise.all(mocks.splice(0).map((x) => x.close()));
});

async function setup(events: Record<string, number> = {}) {
  const m = await startTestMock({ config: { ...twoAccounts, events: { ...twoAccounts.events, ...events } } });
  mocks.push(m);
  const op = await m.client.kubernetesOperators.create({ deployment });
  const stream = async (headers: Record<string, string> = {}, query = '') => {
    const s = await openRawStream(m.url, `/kubernetes_operators/${op.id}/events${query}`, m.key, headers);
    open.push(s);
    return s;
  };
  return { m, op, stream };
}

describe('operator event stream', () => {
  it('starts with ready and delivers created, updated and deleted in order with increasing ids', async () => {
    const { m, stream } = await setup();
    const s = await stream();
    expect(s.status).toBe(200);
    expect(String(s.headers['content-type'])).toMatch(/^text\/event-stream/);
    expect(await s.next()).toEqual({ event: 'ready', id: '0', data: '{"last_event_id":0}' });

    const ep = await m.client.endpoints.create({ url: 'http://web.prod', bindings: ['kubernetes'] });
    const up = await m.client.endpoints.update(ep.id, { description: 'v2' });
    await m.otherClient.endpoints.create({ url: 'http://web.prod', bindings: ['kubernetes'] }); // other account
    await m.client.endpoints.delete(ep.id);

    const [c, u, d] = await s.take(3);
    expect([c!.event, c!.id]).toEqual(['endpoint.created', '1']);
    expect(JSON.parse(c!.data)).toEqual({ endpoint: ep });
    expect([u!.event, u!.id]).toEqual(['endpoint.updated', '2']);
    expect(JSON.parse(u!.data)).toEqual({ endpoint: up });
    expect([d!.event, d!.id]).toEqual(['endpoint.deleted', '3']);
    expect(JSON.parse(d!.data)).toEqual({ endpoint: { id: ep.id, uri: ep.uri, url: ep.url } });
    await expect(s.next(200)).rejects.toThrow(/no event/); // nothing from the other account
  });

  it('fans out to every operator and every stream of the account', async () => {
    const { m, stream } = await setup();
    const op2 = await m.client.kubernetesOperators.create({ deployment: { name: 'b2', namespace: 'ns2' } });
    const a = await stream();
    const b = await openRawStream(m.url, `/kubernetes_operators/${op2.id}/events`, m.key);
    open.push(b);
    await a.next();
    await b.next();
    await m.client.endpoints.create({ url: 'tcp://db.prod:5432', bindings: ['kubernetes'] });
    expect((await a.next()).event).toBe('endpoint.created');
    expect((await b.next()).event).toBe('endpoint.created');
  });

  it('replays the events after Last-Event-ID (header or query), then says ready', async () => {
    const { m, stream } = await setup();
    const ep = await m.client.endpoints.create({ url: 'http://a.b', bindings: ['kubernetes'] });
    await m.client.endpoints.update(ep.id, { description: 'x' });
    await m.client.endpoints.delete(ep.id);

    const s = await stream({ 'last-event-id': '1' });
    const got = await s.take(3);
    expect(got.map((x) => [x.event, x.id])).toEqual([
      ['endpoint.updated', '2'],
      ['endpoint.deleted', '3'],
      ['ready', '3'],
    ]);
    const q = await stream({}, '?last_event_id=3');
    expect((await q.next()).event).toBe('ready');
    const zero = await stream({ 'last-event-id': '0' });
    expect((await zero.take(4)).map((x) => x.id)).toEqual(['1', '2', '3', '3']);
  });

  it('sends resync when the id is older than the log keeps, in the future or not a number', async () => {
    const { m, stream } = await setup({ retention: 3 });
    for (let i = 0; i < 5; i++)
      await m.client.endpoints.create({ url: `http://e${i}.ns`, bindings: ['kubernetes'] });
    // ids 1..5 happened; 3, 4 and 5 are kept, so resuming after 2 still works.
    const ok = await stream({ 'last-event-id': '2' });
    expect((await ok.take(4)).map((x) => [x.event, x.id])).toEqual([
      ['endpoint.created', '3'],
      ['endpoint.created', '4'],
      ['endpoint.created', '5'],
      ['ready', '5'],
    ]);
    for (const [id, reason] of [
      ['1', 'expired'],
      ['6', 'unknown'],
      ['abc', 'unknown'],
    ] as const) {
      const s = await stream({ 'last-event-id': id });
      const msg = await s.next();
      expect([msg.event, msg.id], id).toEqual(['resync', '5']);
      expect(JSON.parse(msg.data)).toEqual({ reason, requested_id: id, last_event_id: 5 });
      // The stream stays live after a resync.
      s.close();
    }
    const live = await stream({ 'last-event-id': '1' });
    expect((await live.next()).event).toBe('resync');
    await m.client.endpoints.create({ url: 'http://e9.ns', bindings: ['kubernetes'] });
    expect(await live.next()).toMatchObject({ event: 'endpoint.created', id: '6' });
  });

  it('caps concurrent streams per operator with 429 ERR_610', async () => {
    const { m, op, stream } = await setup({ max_streams_per_operator: 2 });
    const a = await stream();
    await stream();
    await a.next();
    const third = await stream();
    expect(third.status).toBe(429);
    expect(third.json.error_code).toBe('ERR_610');
    expect(third.headers['retry-after']).toBe('1');
    // Another operator has its own allowance.
    const op2 = await m.client.kubernetesOperators.create({ deployment });
    const other = await openRawStream(m.url, `/kubernetes_operators/${op2.id}/events`, m.key);
    open.push(other);
    expect(other.status).toBe(200);
    // Closing one frees a slot.
    a.close();
    const hub = operatorEventHub(m.api.services);
    await eventually(() => hub.streamCount(op.id) === 1);
    expect((await stream()).status).toBe(200);
  });

  it('sends heartbeat comments on an idle stream', async () => {
    const { stream } = await setup({ heartbeat_ms: 50 });
    const s = await stream();
    await s.next();
    await eventually(() => s.comments.length >= 2);
    expect(s.comments[0]).toBe('heartbeat');
  });

  it('checks the operator, its account and the query', async () => {
    const { m, op } = await setup();
    const other = await openRawStream(m.url, `/kubernetes_operators/${op.id}/events`, m.otherKey);
    expect([other.status, other.json.error_code]).toEqual([404, 'ERR_150']);
    const q = await openRawStream(m.url, `/kubernetes_operators/${op.id}/events?since=1`, m.key);
    expect([q.status, q.json.error_code]).toEqual([400, 'ERR_130']);
  });

  it('ends the streams of a deleted operator', async () => {
    const { m, op, stream } = await setup();
    const s = await stream();
    await s.next();
    await m.client.kubernetesOperators.delete(op.id);
    await s.ended;
    expect(operatorEventHub(m.api.services).streamCount(op.id)).toBe(0);
  });

  it('ends open streams when the server stops', async () => {
    const { m, stream } = await setup();
    const s = await stream();
    await s.next();
    await m.api.stop();
    await s.ended;
  });

  it('replays far more than the slow-reader limit to a client that reads, then says ready, then goes live', async () => {
    const { m, op, stream } = await setup({ max_buffered_bytes: 64 * 1024, retention: 1000 });
    const ep = await m.client.endpoints.create({
      url: 'http://big.ns',
      bindings: ['kubernetes'],
      metadata: 'x'.repeat(4000),
    });
    const record = m.api.services.state('acme').collection('endpoints').get(ep.id)!;
    const hub = operatorEventHub(m.api.services);
    // 400 events of ~4 KB: about 1.6 MB, 25 times the limit, all after the id the client resumes from.
    for (let i = 0; i < 400; i++) hub.record('acme', 'endpoint.updated', record);
    const s = await stream({ 'last-event-id': '1' });
    const got = await s.take(401, 20_000);
    expect(got.slice(0, 400).map((x) => Number(x.id))).toEqual(Array.from({ length: 400 }, (_, i) => i + 2));
    expect([got[400]!.event, got[400]!.id]).toEqual(['ready', '401']);
    await m.client.endpoints.update(ep.id, { description: 'live' });
    const live = await s.next();
    expect([live.event, live.id]).toEqual(['endpoint.updated', '402']);
    expect(hub.streamCount(op.id)).toBe(1);
  });

  it('drops the stream of a client that stopped reading instead of buffering without end', async () => {
    const { m, op } = await setup({ max_buffered_bytes: 64 * 1024 });
    const hub = operatorEventHub(m.api.services);
    const { hostname, port } = new URL(m.url);
    const socket = connect(Number(port), hostname);
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(
      `GET /kubernetes_operators/${op.id}/events HTTP/1.1\r\nHost: ${hostname}:${port}\r\n` +
        `Authorization: Bearer ${m.key}\r\nService-Version: 2\r\n\r\n`,
    );
    socket.pause(); // never reads: the kernel buffers fill, then the server's
    await eventually(() => hub.streamCount(op.id) === 1);
    const ep = await m.client.endpoints.create({
      url: 'http://big.ns',
      bindings: ['kubernetes'],
      metadata: 'x'.repeat(4000),
    });
    const record = m.api.services.state('acme').collection('endpoints').get(ep.id)!;
    // Bounded: at most 20 000 events of ~4 KB (80 MB) before the test gives up.
    for (let i = 0; i < 20_000 && hub.streamCount(op.id) > 0; i++) {
      hub.record('acme', 'endpoint.updated', record);
      if (i % 500 === 499) await new Promise((r) => setImmediate(r));
    }
    expect(hub.streamCount(op.id)).toBe(0);
    socket.destroy();
  });
});
