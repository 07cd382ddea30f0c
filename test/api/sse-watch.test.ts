import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/api/client/index.js';
import { reconnectDelayMs } from '../../src/api/client/sse/watch.js';
import type { OperatorEvent } from '../../src/api/schemas/operator.js';
import { operatorEventHub } from '../../src/mock/events/hub.js';
import { startTestMock, twoAccounts, type TestMock } from '../helpers/mock-api.js';
import { eventually, openRawStream } from '../helpers/sse.js';

const deployment = { name: 'binder', namespace: 'binder-system' };
const mocks: TestMock[] = [];
const controllers: AbortController[] = [];

afterEach(async () => {
  for (const c of controllers.splice(0)) c.abort();
  await Promise.all(mocks.splice(0).map((x) => x.close()));
});

async function setup(events: Record<string, number> = {}) {
  const m = await startTestMock({ config: { ...twoAccounts, events: { ...twoAccounts.events, ...events } } });
  mocks.push(m);
  const op = await m.client.kubernetesOperators.create({ deployment });
  return { m, op };
}

/** Runs watchEvents in the background, collecting events into an array. */
function watch(m: TestMock, opId: string, opts: { lastEventId?: string; idleTimeoutMs?: number } = {}) {
  const ac = new AbortController();
  controllers.push(ac);
  const events: OperatorEvent[] = [];
  const reconnects: { attempt: number; error?: unknown }[] = [];
  const comments: string[] = [];
  const done = (async () => {
    for await (const ev of m.client.kubernetesOperators.watchEvents(opId, {
      signal: ac.signal,
      reconnect: { initialMs: 20, maxMs: 200 },
      onReconnect: (r) => reconnects.push(r),
      onComment: (c) => comments.push(c),
      ...opts,
    })) {
      events.push(ev);
    }
  })();
  return { ac, events, reconnects, comments, done };
}

/** The first `n` events of a stream replayed from the very first id of the log. */
async function collectEvents(m: TestMock, opId: string, n: number): Promise<OperatorEvent[]> {
  const first = operatorEventHub(m.api.services).log('acme').lastId;
  const w = watch(m, opId, { lastEventId: String(first - 3) });
  await eventually(() => w.events.length >= n);
  w.ac.abort();
  await w.done;
  return w.events.slice(0, n);
}

const changes = (events: OperatorEvent[]) => events.filter((e) => e.type.startsWith('endpoint.'));

describe('watchEvents (typed client)', () => {
  it('yields ready, then typed endpoint events in order; ends cleanly on abort', async () => {
    const { m, op } = await setup();
    const w = watch(m, op.id);
    await eventually(() => w.events.length === 1);
    expect(w.events[0]).toEqual({ type: 'ready', id: '0' });
    const ep = await m.client.endpoints.create({ url: 'http://web.prod', bindings: ['kubernetes'] });
    const up = await m.client.endpoints.update(ep.id, { pooling_enabled: true });
    await m.client.endpoints.delete(ep.id);
    await eventually(() => w.events.length === 4);
    expect(w.events.slice(1)).toEqual([
      { type: 'endpoint.created', id: '1', endpoint: ep },
      { type: 'endpoint.updated', id: '2', endpoint: up },
      { type: 'endpoint.deleted', id: '3', endpoint: { id: ep.id, uri: ep.uri, url: ep.url } },
    ]);
    w.ac.abort();
    await w.done; // resolves, no throw
  });

  it('resumes after a dropped stream with no event missed or repeated', async () => {
    const { m, op } = await setup();
    const hub = operatorEventHub(m.api.services);
    const w = watch(m, op.id);
    await eventually(() => w.events.length === 1);
    let n = 0;
    const create = () => m.client.endpoints.create({ url: `http://e${n++}.ns`, bindings: ['kubernetes'] });
    for (let round = 0; round < 4; round++) {
      await create();
      // Drop the connection from the server side: destroy the socket (round 0, 2) or end the response (1, 3).
      const [s] = hub.openStreams(op.id);
      if (round % 2 === 0) s!.res.socket?.destroy();
      else s!.close();
      await create();
      await create();
      await eventually(() => hub.streamCount(op.id) === 1 && changes(w.events).length === (round + 1) * 3);
    }
    const ids = changes(w.events).map((e) => Number(e.id));
    expect(ids).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    expect(w.reconnects.length).toBeGreaterThanOrEqual(4);
    expect(w.events.filter((e) => e.type === 'resync')).toEqual([]);
  });

  it('reconnects when the stream goes silent past idleTimeoutMs, without repeats', async () => {
    const { m, op } = await setup({ heartbeat_ms: 60_000 });
    const w = watch(m, op.id, { idleTimeoutMs: 100 });
    await eventually(() => w.reconnects.length >= 1);
    await m.client.endpoints.create({ url: 'http://idle.ns', bindings: ['kubernetes'] });
    await eventually(() => changes(w.events).length === 1);
    expect(changes(w.events).map((e) => e.id)).toEqual(['1']);
  });

  it('resumes from a given lastEventId and surfaces resync when that id has expired', async () => {
    const { m, op } = await setup({ retention: 2 });
    for (let i = 0; i < 4; i++)
      await m.client.endpoints.create({ url: `http://x${i}.ns`, bindings: ['kubernetes'] });
    const resumed = watch(m, op.id, { lastEventId: '2' });
    await eventually(() => resumed.events.length === 3);
    expect(resumed.events.map((e) => [e.type, e.id])).toEqual([
      ['endpoint.created', '3'],
      ['endpoint.created', '4'],
      ['ready', '4'],
    ]);
    const expired = watch(m, op.id, { lastEventId: '1' });
    await eventually(() => expired.events.length === 1);
    expect(expired.events[0]).toEqual({ type: 'resync', id: '4', reason: 'expired' });
  });

  it('answers an id from an earlier run of the mock with resync, never a replay of this run', async () => {
    // Default event ids start at the server's start time, so a restarted mock (whose state is
    // gone) never mistakes a stale id for one of its own.
    const first = await startTestMock({ config: { ...twoAccounts, events: {} } });
    mocks.push(first);
    const op1 = await first.client.kubernetesOperators.create({ deployment });
    const w1 = watch(first, op1.id);
    await first.client.endpoints.create({ url: 'http://old.ns', bindings: ['kubernetes'] });
    await eventually(() => changes(w1.events).length === 1);
    const staleId = changes(w1.events)[0]!.id;
    w1.ac.abort();
    await w1.done;

    await new Promise((r) => setTimeout(r, 5)); // a later start time
    const second = await startTestMock({ config: { ...twoAccounts, events: {} } });
    mocks.push(second);
    const op2 = await second.client.kubernetesOperators.create({ deployment });
    for (let i = 0; i < 3; i++)
      await second.client.endpoints.create({ url: `http://new${i}.ns`, bindings: ['kubernetes'] });
    const w2 = watch(second, op2.id, { lastEventId: staleId });
    await eventually(() => w2.events.length === 1);
    expect(w2.events[0]).toMatchObject({ type: 'resync', reason: 'expired' });
    expect(Number(w2.events[0]!.id)).toBeGreaterThan(Number(staleId));

    // This run's own (start-time based) ids resume normally.
    const ownIds = (await collectEvents(second, op2.id, 4))
      .filter((e) => e.type !== 'ready')
      .map((e) => e.id);
    const resumed = watch(second, op2.id, { lastEventId: ownIds[0]! });
    await eventually(() => resumed.events.length === 3);
    expect(resumed.events.map((e) => e.id)).toEqual([ownIds[1], ownIds[2], ownIds[2]]);
    expect(resumed.events.map((e) => e.type)).toEqual(['endpoint.created', 'endpoint.created', 'ready']);
  });

  it('sees heartbeats on an idle stream', async () => {
    const { m, op } = await setup({ heartbeat_ms: 50 });
    const w = watch(m, op.id);
    await eventually(() => w.comments.includes('heartbeat'));
    expect(w.reconnects).toEqual([]);
  });

  it('waits for a free slot when the stream cap is reached', async () => {
    const { m, op } = await setup({ max_streams_per_operator: 1 });
    const raw = await openRawStream(m.url, `/kubernetes_operators/${op.id}/events`, m.key);
    await raw.next();
    const w = watch(m, op.id);
    await eventually(() => w.reconnects.length >= 1);
    const err = w.reconnects[0]!.error;
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).errorCode).toBe('ERR_610');
    raw.close();
    await eventually(() => w.events.some((e) => e.type === 'ready'));
  });

  it('throws for an operator that does not exist, and when the operator is deleted', async () => {
    const { m, op } = await setup();
    const missing = m.client.kubernetesOperators.watchEvents('k8sop_01234567890123456789012345');
    await expect(missing.next()).rejects.toMatchObject({ status: 404, errorCode: 'ERR_150' });

    const w = watch(m, op.id);
    await eventually(() => w.events.length === 1);
    await m.client.kubernetesOperators.delete(op.id);
    await expect(w.done).rejects.toMatchObject({ status: 404 });
  });
});

describe('reconnectDelayMs', () => {
  it('grows exponentially with jitter in [ceiling/2, ceiling] and caps at maxMs', () => {
    const p = { initialMs: 100, maxMs: 1000 };
    expect(reconnectDelayMs(p, 1, () => 0)).toBe(50);
    expect(reconnectDelayMs(p, 1, () => 1)).toBe(100);
    expect(reconnectDelayMs(p, 3, () => 0)).toBe(200);
    expect(reconnectDelayMs(p, 3, () => 1)).toBe(400);
    expect(reconnectDelayMs(p, 30, () => 1)).toBe(1000);
    expect(reconnectDelayMs(p, 30, () => 0)).toBe(500);
  });
});
