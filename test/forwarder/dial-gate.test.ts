import { afterEach, describe, expect, it, vi } from 'vitest';
import { Cancellation } from '../../src/api/ingress/cancel.js';
import { DialGate, INITIAL_WINDOW, type DialTicket } from '../../src/forwarder/dial-gate.js';
import { DOWN_AFTER, DOWN_PORT_DIALS } from '../../src/forwarder/upstream-verdict.js';

const limits = {
  maxConcurrentDials: 1,
  maxIngressConnectionsPerPort: 100,
  maxIngressConnectionsPerSource: 100,
};

/** Asks for a turn and records the order of grants. */
function ask(
  gate: DialGate,
  port: number,
  order: string[],
  label: string,
  source = 's',
): Promise<DialTicket> {
  return gate.acquire(port, source, new Cancellation(), 10_000).then((t) => {
    if (!t) throw new Error(`${label}: no ticket`);
    order.push(label);
    return t;
  });
}

describe('DialGate (fair admission)', () => {
  it('grants turns round-robin over the ports with waiters, not first come first served', async () => {
    const gate = new DialGate(limits);
    const order: string[] = [];
    const first = await ask(gate, 1, order, 'a0');
    // Each client is done as soon as it is granted, which grants the next.
    const served = (port: number, label: string) => ask(gate, port, order, label).then((t) => t.release());
    const waits = [served(1, 'a1'), served(1, 'a2'), served(1, 'a3'), served(2, 'b1'), served(3, 'c1')];
    first.release();
    await Promise.all(waits);
    // a.x had four clients queued before b.x's and c.x's first: they still go second and third.
    expect(order).toEqual(['a0', 'b1', 'c1', 'a1', 'a2', 'a3']);
  });

  it("holds a port to its share, and frees the turn at the handshake's end", async () => {
    const gate = new DialGate({ ...limits, maxConcurrentDials: 10, maxIngressConnectionsPerPort: 2 });
    const order: string[] = [];
    const a = [await ask(gate, 1, order, 'a0'), await ask(gate, 1, order, 'a1')];
    for (const t of a) t.handshakeDone();
    expect(gate.active).toBe(0);
    const third = ask(gate, 1, order, 'a2');
    await ask(gate, 2, order, 'b0');
    expect(order).toEqual(['a0', 'a1', 'b0']);
    expect(gate.waiting).toBe(1);
    a[0]!.release();
    (await third).release();
    expect(order).toEqual(['a0', 'a1', 'b0', 'a2']);
  });

  it('has DOWN_PORT_DIALS dials awaiting an answer at once for a port whose upstream is down, until one reaches it', async () => {
    const gate = new DialGate({ ...limits, maxConcurrentDials: 100 });
    for (let i = 0; i < DOWN_AFTER; i++) {
      expect(gate.upstreamDown(1), `after ${i} down answers in a row`).toBe(false);
      const probe = (await gate.acquire(1, 's', new Cancellation(), 10_000))!;
      probe.handshakeDone();
      probe.upstreamAnswered(false); // ERR_731
      probe.release();
    }
    expect(gate.upstreamDown(1)).toBe(true);
    const order: string[] = [];
    const a = Array.from({ length: 10 }, (_, i) => ask(gate, 1, order, `a${i}`));
    await Promise.resolve();
    expect(gate.active, 'dials granted to the down port').toBe(DOWN_PORT_DIALS);
    // Another port is not held back by the down port's queue or the window it leaves unused.
    const b = await ask(gate, 2, order, 'b0');
    expect(gate.active).toBe(DOWN_PORT_DIALS + 1);
    const granted = await Promise.all(a.slice(0, DOWN_PORT_DIALS));
    // Their handshakes are over, but no answer yet (the ingress's 5 s upstream connect): no more of A's.
    for (const t of granted) t.handshakeDone();
    await Promise.resolve();
    expect(
      order.filter((l) => l.startsWith('a')),
      'handshakes done, answers pending',
    ).toHaveLength(DOWN_PORT_DIALS);
    // One answered (ERR_731 again): one more of A's goes.
    granted[2]!.upstreamAnswered(false);
    await a[DOWN_PORT_DIALS];
    expect(order.filter((l) => l.startsWith('a'))).toHaveLength(DOWN_PORT_DIALS + 1);
    expect(gate.upstreamDown(1)).toBe(true);
    // An older dial's late ERR_731 after a newer one reached the upstream does not mark it down.
    granted[3]!.upstreamAnswered(true);
    expect(gate.upstreamDown(1)).toBe(false);
    granted[0]!.upstreamAnswered(false);
    expect(gate.upstreamDown(1), 'an older answer decided').toBe(false);
    // Up again: every waiter of A is granted (the window allows 100).
    await Promise.all(a);
    expect(order.filter((l) => l.startsWith('a'))).toHaveLength(10);
    b.release();
    for (const t of await Promise.all(a)) t.release();
  });

  it('drops a waiter whose client is gone: it is never granted', async () => {
    const gate = new DialGate(limits);
    const held = (await gate.acquire(1, 's', new Cancellation(), 1000))!;
    const gone = new Cancellation();
    const p = gate.acquire(1, 's', gone, 10_000);
    gone.abort();
    expect(await p).toBeUndefined();
    expect(gate.waiting).toBe(0);
    held.release();
    expect(gate.active).toBe(0);
  });

  it('grows the window while clients wait and halves it once per overshoot on the first push-back', async () => {
    const gate = new DialGate({
      maxConcurrentDials: 1000,
      maxIngressConnectionsPerPort: 10_000,
      maxIngressConnectionsPerSource: 10_000,
    });
    expect(gate.turns).toBe(INITIAL_WINDOW);
    const tickets = await Promise.all(
      Array.from({ length: INITIAL_WINDOW }, () => gate.acquire(1, 's', new Cancellation(), 1000)),
    );
    const waiting = Array.from({ length: 200 }, () => gate.acquire(1, 's', new Cancellation(), 1000));
    for (const t of tickets) t!.handshakeDone();
    // Each completed handshake with clients waiting adds a turn: the window doubled.
    expect(gate.turns).toBe(2 * INITIAL_WINDOW);
    const granted = await Promise.all(waiting.slice(0, 2 * INITIAL_WINDOW));
    granted[0]!.handshakeDone('pushed-back');
    expect(gate.turns).toBe(INITIAL_WINDOW);
    // A second push-back of the same overshoot (a dial granted before the cut) does not cut again.
    granted[1]!.handshakeDone('pushed-back');
    expect(gate.turns).toBe(INITIAL_WINDOW);
    for (const t of [...tickets, ...granted]) t!.release();
    for (const w of waiting.slice(2 * INITIAL_WINDOW)) (await w)?.release();
  });

  it('queues a retry after a push-back at the front of its port, still in the round over the ports', async () => {
    const gate = new DialGate(limits);
    const order: string[] = [];
    const held = await ask(gate, 1, order, 'a0');
    const served = (port: number, label: string) => ask(gate, port, order, label).then((t) => t.release());
    const waits = [served(1, 'a1'), served(2, 'b1'), served(1, 'a2')];
    const retry = gate.acquire(1, 's', new Cancellation(), 10_000, true).then((t) => {
      order.push('a-retry');
      t!.release();
    });
    held.release();
    await Promise.all([...waits, retry]);
    // Port 1 had the last turn, so port 2 goes next; then port 1's retry, before its older waiters.
    expect(order).toEqual(['a0', 'b1', 'a-retry', 'a1', 'a2']);
  });

  it('gives up a queued client when too little of its time is left for a dial to finish', async () => {
    let t = 0;
    const gate = new DialGate(limits, () => t);
    const first = (await gate.acquire(1, 's', new Cancellation(), 10_000))!;
    t += 100;
    first.handshakeDone(); // handshakes take 100 ms: a dial needs about 150 ms until the answer
    expect(gate.expectedDialMs).toBe(150);
    const busy = (await gate.acquire(1, 's', new Cancellation(), 10_000))!; // the one turn is taken
    const tooLate = gate.acquire(2, 's', new Cancellation(), 140);
    // Not queued at all (a queued client would count as waiting until its 140 ms ran out).
    expect(gate.waiting).toBe(0);
    expect(await tooLate).toBeUndefined();
    const later = gate.acquire(2, 's', new Cancellation(), 10_000);
    expect(gate.waiting).toBe(1);
    busy.release();
    (await later)!.release();
    first.release();
  });

  it('counts a failed handshake neither as a completion of the window nor in the handshake time', async () => {
    let t = 0;
    const gate = new DialGate({ ...limits, maxConcurrentDials: 1000 }, () => t);
    const tickets = await Promise.all(
      Array.from({ length: INITIAL_WINDOW }, () => gate.acquire(1, 's', new Cancellation(), 10_000)),
    );
    const waiting = gate.acquire(1, 's', new Cancellation(), 10_000);
    t += 5_000; // e.g. every attempt timed out in its TLS handshake
    for (const ticket of tickets) ticket!.handshakeDone('failed');
    expect({ turns: gate.turns, expectedDialMs: gate.expectedDialMs, active: gate.active }).toEqual({
      turns: INITIAL_WINDOW,
      expectedDialMs: 0,
      active: 1, // the turns were freed: the waiter got one
    });
    for (const ticket of tickets) ticket!.release();
    (await waiting)!.release();
  });

  describe('a burst against an ingress that counts a dial pending for its last half only (simulated time)', () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    /**
     * The bench's TLS v1 burst (bench:isolation --part burst), in simulated time: 2,000 clients at
     * once, each with a deadline spread over 9–10 s as retry.ts spreads `prefaceTimeoutMs`. A dial
     * holds its turn for two halves of 200–260 ms each (TCP, then TLS: two round trips at 200 ms,
     * give or take a busy machine) and is pending at the ingress for the second (its last round
     * trip), where at most 64 may be pending from us (the mock's max_handshakes_per_source); one
     * more is refused, seen at the end of its turn, and its client asks again at the front.
     */
    async function burst(): Promise<{ served: number; gaveUp: number; pushedBack: number }> {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
      let seed = 1;
      const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
      const half = () => 200 * (1 + 0.3 * random());
      const budget = 64;
      const gate = new DialGate(
        {
          maxConcurrentDials: 1024,
          maxIngressConnectionsPerPort: 10_000,
          maxIngressConnectionsPerSource: 10_000,
        },
        () => Date.now(),
      );
      const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
      const stats = { served: 0, gaveUp: 0, pushedBack: 0 };
      let pendingAtIngress = 0;
      const client = async () => {
        const deadline = Date.now() + 9_000 + 1_000 * random();
        for (let retry = false; ; retry = true) {
          const ticket = await gate.acquire(1, 's', new Cancellation(), deadline - Date.now(), retry);
          if (!ticket) {
            stats.gaveUp++;
            return;
          }
          await sleep(half());
          const admitted = pendingAtIngress < budget;
          if (admitted) pendingAtIngress++;
          await sleep(half());
          if (admitted) {
            pendingAtIngress--;
            ticket.handshakeDone('up');
            ticket.release();
            stats.served++;
            return;
          }
          stats.pushedBack++;
          ticket.handshakeDone('pushed-back');
          ticket.release();
        }
      };
      const all = Promise.all(Array.from({ length: 2000 }, client));
      await vi.advanceTimersByTimeAsync(11_000);
      await all;
      return stats;
    }

    it('serves all 2,000 before their deadlines: paced grants let the ingress take about twice its budget in turns', async () => {
      const seen = await burst();
      // Unpaced, the window's dials travel in waves: the ingress sees them all pending at once and
      // pushes back at a window of its budget. Checked against this model: the gate of c0c50dd
      // (no pacing, later cuts of ¾) served 1,469 and 531 gave up, as the bench saw 1,472–1,586;
      // pacing at 1.25 windows per handshake time with those cuts, 1,930; today's rules without
      // the pacing, 1,767.
      expect(seen, JSON.stringify(seen)).toMatchObject({ served: 2000, gaveUp: 0 });
    });
  });
  describe("another endpoint's dials while 400 clients of a black-holed endpoint reconnect (simulated time)", () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    const HANDSHAKE_CPU_MS = 3.5;

    /**
     * Two cores that serve CPU work in the order it was asked for: a handshake's CPU (both sides of
     * a TLS handshake on this machine, ~3.5 ms) waits behind every handshake asked for before it.
     */
    function cores(n: number): (ms: number) => Promise<void> {
      const queue: { ms: number; done: () => void }[] = [];
      let busy = 0;
      const next = () => {
        while (busy < n && queue.length > 0) {
          const job = queue.shift()!;
          busy++;
          setTimeout(() => {
            busy--;
            job.done();
            next();
          }, job.ms);
        }
      };
      return (ms) =>
        new Promise<void>((done) => {
          queue.push({ ms, done });
          next();
        });
    }

    /**
     * The bench's hole phase (bench:isolation, TLS v1): endpoint A's upstream drops SYNs, and its
     * 400 clients all gave up together and reconnect at once, each with 10 s to be served; a dial's
     * handshake is CPU on the two cores, then it waits 5 s for the ingress's ERR_731. A client of
     * endpoint B dials every 25 ms. Returns B's times from asking for a turn to its handshake's
     * end (ms), and how many of A's clients were dialled (a handshake's CPU each).
     */
    async function holePhase(aKnownDown: boolean): Promise<{ b: number[]; aDialled: number }> {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
      const gate = new DialGate(
        { maxConcurrentDials: 1024, maxIngressConnectionsPerPort: 512, maxIngressConnectionsPerSource: 512 },
        () => Date.now(),
      );
      const cpu = cores(2);
      const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
      let aDialled = 0;
      const dial = async (port: number, reached: boolean): Promise<number> => {
        const asked = Date.now();
        const ticket = await gate.acquire(port, `pod-${port}`, new Cancellation(), 10_000);
        if (!ticket) return Number.NaN; // gave up waiting for a turn
        if (port === 1) aDialled++;
        await cpu(HANDSHAKE_CPU_MS);
        ticket.handshakeDone('up');
        const took = Date.now() - asked;
        if (!reached) await sleep(5_000);
        ticket.upstreamAnswered(reached);
        ticket.release();
        return took;
      };
      // Earlier dials of A were answered ERR_731 (or, the first wave, not yet).
      if (aKnownDown) {
        const earlier = Promise.all(Array.from({ length: DOWN_AFTER }, () => dial(1, false)));
        await vi.advanceTimersByTimeAsync(5_100);
        await earlier;
        aDialled = 0;
      }
      const a = Promise.all(Array.from({ length: 400 }, () => dial(1, false)));
      const b: Promise<number>[] = [];
      for (let i = 0; i < 40; i++) {
        b.push(dial(2, true));
        await vi.advanceTimersByTimeAsync(25);
      }
      await vi.advanceTimersByTimeAsync(16_000);
      await a;
      return { b: await Promise.all(b), aDialled };
    }

    it("keeps B's dials at one handshake's CPU, and A's to a few probes, once A's upstream is known down", async () => {
      const known = await holePhase(true);
      const unknown = await holePhase(false);
      const worst = (ms: number[]) => Math.max(...ms);
      // Known down, A has DOWN_PORT_DIALS dials waiting for their answer and no more: its clients
      // cost four handshakes per 5 s, and B's handshake waits behind those four at most (on two
      // cores), and only when they were just granted. Not yet known
      // (the first wave, before any answer), A's 400 are dialled at once and B's handshake waits
      // behind tens of them (up to ~350 ms): the bench's miss.
      expect(worst(known.b), `B's dial times with A known down: ${known.b.join(' ')}`).toBeLessThanOrEqual(
        (DOWN_PORT_DIALS / 2 + 1) * HANDSHAKE_CPU_MS + 1,
      );
      expect(known.aDialled, "A's clients dialled in its 10 s, known down").toBeLessThanOrEqual(
        DOWN_PORT_DIALS * 3,
      );
      expect(
        worst(unknown.b),
        `B's dial times before A is known down: ${unknown.b.join(' ')}`,
      ).toBeGreaterThan(20 * HANDSHAKE_CPU_MS);
      expect(unknown.aDialled).toBe(400);
    });
  });
});
