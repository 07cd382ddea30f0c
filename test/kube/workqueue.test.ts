import { describe, expect, it } from 'vitest';
import { ItemBackoffLimiter } from '../../src/kube/workqueue/rate-limiter.js';
import { WorkQueue } from '../../src/kube/workqueue/queue.js';
import type { BackoffOptions } from '../../src/time/backoff.js';
import { ManualClock, settle } from '../helpers/manual-clock.js';

const curve = (initialMs: number, maxMs: number): BackoffOptions => ({
  initialMs,
  maxMs,
  jitter: 0.5,
  resetAfterMs: Number.MAX_SAFE_INTEGER,
});

function queue(clock = new ManualClock()) {
  const limiter = new ItemBackoffLimiter<string>(
    (item) => (item.startsWith('slow:') ? curve(2_000, 300_000) : curve(100, 1_000)),
    () => clock.now(),
    () => clock.random(),
  );
  return { q: new WorkQueue<string>({ limiter, clock }), clock };
}

/** Takes whatever is ready now, without waiting. */
async function drain(q: WorkQueue<string>): Promise<string[]> {
  const out: string[] = [];
  while (q.length > 0) {
    const item = (await q.get())!;
    out.push(item);
    q.done(item);
  }
  return out;
}

describe('work queue: coalescing', () => {
  it('an item added several times before a worker takes it is processed once, in first-added order', async () => {
    const { q } = queue();
    for (const item of ['pass', 'read:a', 'pass', 'read:b', 'read:a']) q.add(item);
    expect(await drain(q)).toEqual(['pass', 'read:a', 'read:b']);
  });

  it('an item added while a worker processes it is handed out again only after done', async () => {
    const { q } = queue();
    q.add('pass');
    const first = await q.get();
    q.add('pass');
    q.add('pass');
    expect(q.length).toBe(0); // a second worker cannot take it meanwhile
    let second: string | undefined;
    void q.get().then((i) => (second = i));
    await settle();
    expect(second).toBeUndefined();
    q.done(first!);
    await settle();
    expect(second).toBe('pass');
    q.done('pass');
    expect(q.length).toBe(0); // the two adds during processing became one re-run
  });

  it('a waiting worker gets an item as soon as it is added', async () => {
    const { q } = queue();
    const got = q.get();
    q.add('read:x');
    expect(await got).toBe('read:x');
  });
});

describe('work queue: delays on the clock seam', () => {
  it('addAfter holds an item until its delay has passed; the earliest of several delays wins', async () => {
    const { q, clock } = queue();
    q.addAfter('pass', 500);
    q.addAfter('pass', 50);
    q.addAfter('pass', 900);
    await clock.advance(49);
    expect(q.length).toBe(0);
    expect(q.isWaiting('pass')).toBe(true);
    await clock.advance(1);
    expect(await drain(q)).toEqual(['pass']);
    expect(q.isWaiting('pass')).toBe(false);
    await clock.advance(10_000);
    expect(q.length).toBe(0); // the later delays were folded into the first
  });

  it('delayed items come out in deadline order, each at its own time', async () => {
    const { q, clock } = queue();
    q.addAfter('c', 300);
    q.addAfter('a', 100);
    q.addAfter('b', 200);
    const seen: [number, string[]][] = [];
    for (let t = 100; t <= 300; t += 100) {
      await clock.advance(100);
      seen.push([t, await drain(q)]);
    }
    expect(seen).toEqual([
      [100, ['a']],
      [200, ['b']],
      [300, ['c']],
    ]);
  });

  it('addAfter with no delay is add', async () => {
    const { q } = queue();
    q.addAfter('now', 0);
    expect(await drain(q)).toEqual(['now']);
  });
});

describe('work queue: rate limiting per item', () => {
  it('each failure of an item doubles its delay up to the cap; forget starts the sequence again', async () => {
    const { q, clock } = queue();
    const delays: number[] = [];
    for (let i = 0; i < 6; i++) {
      q.addRateLimited('write:ns/a');
      delays.push(clock.sleeps.at(-1)!);
      await clock.advance(clock.sleeps.at(-1)!);
      expect(await drain(q)).toEqual(['write:ns/a']);
    }
    expect(delays).toEqual([100, 200, 400, 800, 1_000, 1_000]);
    expect(q.numRequeues('write:ns/a')).toBe(6);
    q.forget('write:ns/a');
    expect(q.numRequeues('write:ns/a')).toBe(0);
    q.addRateLimited('write:ns/a');
    expect(clock.sleeps.at(-1)).toBe(100);
  });

  it('items back off independently, each on the curve of its kind', async () => {
    const { q, clock } = queue();
    q.addRateLimited('write:ns/a');
    q.addRateLimited('write:ns/a'); // second failure recorded while the first delay runs: 200
    q.addRateLimited('write:ns/b');
    q.addRateLimited('slow:ns/c');
    await clock.advance(100);
    expect(await drain(q)).toEqual(['write:ns/a', 'write:ns/b']);
    expect(q.numRequeues('write:ns/a')).toBe(2);
    expect(q.numRequeues('write:ns/b')).toBe(1);
    await clock.advance(1_899);
    expect(q.length).toBe(0);
    await clock.advance(1);
    expect(await drain(q)).toEqual(['slow:ns/c']);
  });

  it('jitter only shortens a delay, by at most its share', () => {
    const clock = new ManualClock(0, 0.999);
    const { q } = queue(clock);
    q.addRateLimited('write:x');
    expect(clock.sleeps.at(-1)).toBe(50);
  });
});

describe('work queue: shutting down', () => {
  it('waiting workers get undefined; nothing is handed out afterwards; an aborted get resolves undefined', async () => {
    const { q, clock } = queue();
    const ctl = new AbortController();
    const aborted = q.get(ctl.signal);
    ctl.abort();
    expect(await aborted).toBeUndefined();
    const waiting = q.get();
    q.addAfter('later', 100);
    q.shutDown();
    expect(await waiting).toBeUndefined();
    q.add('x');
    await clock.advance(1_000);
    expect(await q.get()).toBeUndefined();
    expect(clock.pending).toBe(0);
  });
});
