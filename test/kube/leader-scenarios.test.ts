/**
 * The "two leaders" scenarios, each with two electors against one kubesim on fake clocks (see
 * leader-harness.ts): the leader's event loop blocked, its renew answer delayed or landing after
 * the deadline, and its wall clock stepped. The checker fails on any instant with two leaders
 * and on any work write made while another elector leads.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { LeaderElector, type ElectorOutcome } from '../../src/kube/leader/elector.js';
import { startKubesim, type Kubesim } from '../../src/kubesim/index.js';
import { captureLogger, newRegistry } from './helpers.js';
import { ElectorProxy, LeaderChecker, World, type FakeClock, type ProxyRule } from './leader-harness.js';

/** The timings: lease 3 s, renew deadline 2 s. */
const T = { leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 500 };
const NS = 'leader-scenarios';
const TICK_MS = 100;

let sim: Kubesim;
let counter = 0;

beforeAll(async () => {
  sim = await startKubesim({ initialNamespaces: [NS] });
});
afterAll(async () => {
  await sim.stop();
});

interface Node {
  name: string;
  clock: FakeClock;
  proxy: ElectorProxy;
  elector: LeaderElector;
  logs: ReturnType<typeof captureLogger>;
  ctl: AbortController;
  outcome: ElectorOutcome | undefined;
  done: Promise<void> | undefined;
  /** Work signals handed to onStartedLeading, and the simulated time each one aborted. */
  work: AbortSignal[];
  abortedAt: number[];
  /** Runs at every work tick, before the leadership check (e.g. a busy loop). */
  tick: (() => Promise<void> | void) | undefined;
}

class Scenario {
  readonly world = new World();
  readonly lease = `scenario-${++counter}`;
  readonly nodes = new Map<string, Node>();
  /** Filled by `add`; the checker reads it at every sample. */
  private readonly electors = new Map<string, { isLeader(): boolean }>();
  readonly checker = new LeaderChecker(this.electors, () => this.world.t);

  constructor({ probe = true } = {}) {
    if (probe) this.world.probe(() => this.checker.sample());
  }

  async add(name: string, monoOffset = 0): Promise<Node> {
    const clock = this.world.clock({ monoOffset });
    const proxy = await new ElectorProxy(sim.url, sim.adminToken, { world: this.world, clock }).start();
    const logs = captureLogger();
    const node: Node = {
      name,
      clock,
      proxy,
      logs,
      ctl: new AbortController(),
      outcome: undefined,
      done: undefined,
      work: [],
      abortedAt: [],
      tick: undefined,
      elector: new LeaderElector({
        kubeConfig: proxy.kubeConfig(),
        namespace: NS,
        name: this.lease,
        identity: name,
        logger: logs.logger,
        metrics: newRegistry(),
        clock,
        ...T,
        onStartedLeading: (signal) => this.work(node, signal),
      }),
    };
    this.nodes.set(name, node);
    this.electors.set(name, node.elector);
    return node;
  }

  /** A controller's loop: every tick, check leadership immediately before "writing". */
  private async work(node: Node, signal: AbortSignal): Promise<void> {
    node.work.push(signal);
    signal.addEventListener('abort', () => node.abortedAt.push(this.world.t), { once: true });
    while (!signal.aborted) {
      await node.clock.sleep(TICK_MS, signal);
      if (signal.aborted) return;
      await node.tick?.();
      if (node.elector.isLeader()) this.checker.write(node.name);
    }
  }

  start(node: Node): void {
    node.done = node.elector.run(node.ctl.signal).then((o) => {
      node.outcome = o;
    });
  }

  /** Starts `a`, lets it lead, then starts `b` and lets it observe `a` as the holder. */
  async leaderAndFollower(): Promise<[Node, Node]> {
    const a = await this.add('a', 1_000_000);
    const b = await this.add('b', 5_000);
    this.start(a);
    await this.world.advanceUntil(() => a.elector.isLeader(), 'a leads');
    this.start(b);
    await this.world.advanceUntil(() => b.elector.leader() === 'a', 'b observes a');
    await this.world.advance(1_000);
    expect(a.elector.isLeader()).toBe(true);
    expect(b.elector.isLeader()).toBe(false);
    return [a, b];
  }

  async close(): Promise<void> {
    for (const n of this.nodes.values()) {
      n.proxy.rule = () => undefined;
      n.tick = undefined;
      n.ctl.abort();
    }
    await this.world.advanceUntil(
      () => [...this.nodes.values()].every((n) => n.outcome !== undefined),
      'every elector to stop',
    );
    await Promise.all([...this.nodes.values()].map((n) => n.proxy.stop()));
    this.world.close();
  }
}

/** The deadline implied by the last renewal `node` got an answer to: its GET's arrival + R. */
function deadlineOfLastRenewal(node: Node, before = Infinity): number {
  const a = node.proxy.arrived;
  const putIdx = a.findLastIndex((r) => r.method === 'PUT' && r.at <= before);
  const put = a[putIdx];
  if (!put) throw new Error('no renewal seen');
  const get = a.slice(0, putIdx).findLast((r) => r.method === 'GET');
  return (get ?? put).at + T.renewDeadlineMs;
}

/** After `n` PUTs pass normally, the next PUT gets `first`; everything after it gets `rest`. */
function afterPuts(n: number, first: ReturnType<ProxyRule>, rest: ReturnType<ProxyRule>): ProxyRule {
  let puts = 0;
  let tripped = false;
  return ({ method }) => {
    if (tripped) return rest;
    if (method === 'PUT' && ++puts > n) {
      tripped = true;
      return first;
    }
    return undefined;
  };
}

let current: Scenario | undefined;
afterEach(async () => {
  await current?.close();
  current = undefined;
});

function scenario(opts?: { probe?: boolean }): Scenario {
  current = new Scenario(opts);
  return current;
}

describe('leader election never has two leaders', () => {
  it('the leader busy-loops for 5 s: at the end of the loop it is no longer leader and does not write', async () => {
    const s = scenario();
    const [a, b] = await s.leaderAndFollower();
    let busyFrom = -1;
    const after: { leader: boolean }[] = [];
    a.tick = async () => {
      if (busyFrom >= 0) return;
      busyFrom = s.world.t;
      await a.clock.busy(5_000);
      after.push({ leader: a.elector.isLeader() });
    };
    await s.world.advanceUntil(() => a.outcome !== undefined, 'a gives up');
    await s.world.advanceUntil(() => b.elector.isLeader(), 'b leads');

    expect(s.checker.violations).toEqual([]);
    expect(after).toHaveLength(1);
    expect(after[0]).toMatchObject({ leader: false });
    expect(a.outcome).toBe('lost');
    // b took over while a was still busy: the overlap the old flag allowed was real.
    const bFrom = s.checker.ledFrom('b');
    expect(bFrom).toBeDefined();
    expect(bFrom).toBeLessThan(busyFrom + 5_000);
    // a stopped leading by its renew deadline, before b started.
    const aTerm = s.checker.terms.get('a')?.[0];
    expect(aTerm?.to).toBeLessThanOrEqual(bFrom ?? -1);
    expect(aTerm?.to).toBeLessThanOrEqual(deadlineOfLastRenewal(a, busyFrom) + 20);
    expect(s.checker.writes.filter((w) => w.who === 'a' && w.at >= busyFrom)).toEqual([]);
    expect(s.checker.writes.some((w) => w.who === 'b')).toBe(true);
  });

  it('the first code after the busy loop sees isLeader() false before any timer ran; then the work signal aborts', async () => {
    const s = scenario({ probe: false });
    const [a] = await s.leaderAndFollower();
    const seen: { at: number; abortedBefore: boolean; leader: boolean }[] = [];
    let busy = false;
    a.tick = async () => {
      if (busy) return;
      busy = true;
      await a.clock.busy(5_000);
      const abortedBefore = a.work[0]?.aborted ?? false;
      seen.push({ at: s.world.t, abortedBefore, leader: a.elector.isLeader() });
    };
    await s.world.advanceUntil(() => a.outcome !== undefined, 'a gives up');
    // No timer could run during the loop: only the exact check can tell.
    expect(seen).toEqual([{ at: expect.any(Number), abortedBefore: false, leader: false }]);
    // The late abort timer runs next, at the same instant.
    expect(a.abortedAt).toEqual([seen[0]?.at]);
    expect(a.work[0]?.reason).toBe('lost');
    expect(a.outcome).toBe('lost');
    expect(s.checker.violations).toEqual([]);
  });

  it('the leader process is stopped (SIGSTOP) for 5 s in the middle of a renewal', async () => {
    const s = scenario();
    const [a, b] = await s.leaderAndFollower();
    // Stop a as soon as its next renewal reaches the API server.
    let stoppedAt = -1;
    a.proxy.rule = ({ method }) => {
      if (method !== 'PUT' || stoppedAt >= 0) return undefined;
      stoppedAt = s.world.t;
      return { stallAfterMs: 5_000 };
    };
    await s.world.advanceUntil(() => a.outcome !== undefined, 'a gives up');
    await s.world.advanceUntil(() => b.elector.isLeader(), 'b leads');
    expect(s.checker.violations).toEqual([]);
    expect(a.outcome).toBe('lost');
    const bFrom = s.checker.ledFrom('b') ?? Infinity;
    expect(bFrom).toBeLessThan(stoppedAt + 5_000);
    expect(s.checker.terms.get('a')?.[0]?.to).toBeLessThanOrEqual(bFrom);
    expect(s.checker.writes.filter((w) => w.who === 'a' && w.at > stoppedAt)).toEqual([]);
    // Every write was guarded by the resourceVersion the elector had observed.
    const puts = [...a.proxy.arrived, ...b.proxy.arrived].filter((r) => r.method === 'PUT');
    expect(puts.length).toBeGreaterThan(3);
    const guarded = z.object({ metadata: z.object({ resourceVersion: z.string().min(1) }) });
    for (const put of puts) expect(guarded.safeParse(JSON.parse(put.body)).success).toBe(true);
  });

  it.each([
    // 1.4 s: the longest delay that still lands before the previous renewal's deadline.
    ['delayed by 1.4 s', { delayMs: 1_400 }],
    ['followed by a 1.2 s stall', { stallAfterMs: 1_200 }],
  ] as const)(
    'a renewal answer %s counts from when it was sent, not when it returned',
    async (_label, first) => {
      const s = scenario();
      const [a, b] = await s.leaderAndFollower();
      const puts = a.proxy.arrived.filter((r) => r.method === 'PUT').length;
      // The next renewal succeeds late; after it, a is cut off from the API.
      a.proxy.rule = afterPuts(0, first, { cut: true });
      await s.world.advanceUntil(() => a.outcome !== undefined, 'a gives up');
      await s.world.advanceUntil(() => b.elector.isLeader(), 'b leads');
      expect(s.checker.violations).toEqual([]);
      expect(a.outcome).toBe('lost');
      // The late answer was a success (a renewed with it) ...
      const late = a.proxy.delivered.filter((r) => r.method === 'PUT')[puts];
      expect(late?.status).toBe(200);
      const aTerm = s.checker.terms.get('a')?.[0];
      expect(aTerm?.to).toBeGreaterThan(late?.at ?? Infinity);
      // ... whose deadline runs from the request, not from the answer.
      const expected = deadlineOfLastRenewal(a);
      expect(Math.abs((aTerm?.to ?? 0) - expected)).toBeLessThanOrEqual(20);
      expect(aTerm?.to).toBeLessThan((late?.at ?? 0) + T.renewDeadlineMs);
      expect(aTerm?.to).toBeLessThanOrEqual(s.checker.ledFrom('b') ?? -1);
    },
  );

  it('a renewal success that lands after the deadline counts as a failure', async () => {
    const s = scenario();
    const [a, b] = await s.leaderAndFollower();
    // Answers before late timers when the stall ends, so the elector handles the success first.
    s.world.ioFirst = true;
    a.proxy.rule = afterPuts(0, { stallAfterMs: 2_500 }, undefined);
    await s.world.advanceUntil(() => a.outcome !== undefined, 'a gives up');
    expect(a.outcome).toBe('lost');
    expect(a.logs.count('leader election renewal landed after the renew deadline')).toBe(1);
    expect(s.checker.terms.get('a')).toHaveLength(1);
    await s.world.advanceUntil(() => b.elector.isLeader(), 'b leads');
    expect(s.checker.violations).toEqual([]);
  });

  it('an acquisition that lands after the deadline does not lead until renewed in time', async () => {
    const s = scenario();
    s.world.ioFirst = true;
    const [a, b] = await s.leaderAndFollower();
    a.proxy.rule = () => ({ cut: true });
    b.proxy.rule = afterPuts(0, { stallAfterMs: 2_500 }, undefined);
    await s.world.advanceUntil(() => b.elector.isLeader(), 'b leads');
    expect(b.logs.count('leader election acquire landed after the renew deadline')).toBe(1);
    const bPuts = b.proxy.delivered.filter((r) => r.method === 'PUT');
    expect(bPuts.length).toBeGreaterThanOrEqual(2);
    // b led only from the answer to a second, timely write.
    expect(s.checker.ledFrom('b')).toBeGreaterThanOrEqual(bPuts[1]?.at ?? Infinity);
    expect(a.outcome).toBe('lost');
    expect(s.checker.violations).toEqual([]);
  });

  it("stepping the cut-off leader's wall clock back 10 s does not extend its leadership", async () => {
    const s = scenario();
    const [a, b] = await s.leaderAndFollower();
    a.proxy.rule = () => ({ cut: true });
    a.clock.stepWall(-10_000);
    await s.world.advanceUntil(() => b.elector.isLeader(), 'b leads');
    await s.world.advanceUntil(() => a.outcome !== undefined, 'a gives up');
    expect(s.checker.violations).toEqual([]);
    const aTerm = s.checker.terms.get('a')?.[0];
    expect(Math.abs((aTerm?.to ?? 0) - deadlineOfLastRenewal(a))).toBeLessThanOrEqual(20);
    expect(aTerm?.to).toBeLessThanOrEqual(s.checker.ledFrom('b') ?? -1);
  });

  it("a follower's wall clock jumping 60 s ahead does not make it take over a live lease", async () => {
    const s = scenario();
    const [a, b] = await s.leaderAndFollower();
    // a stops for 1.75 s right after a renewal (within its 2 s deadline), so b reads the same
    // record twice: once before its wall clock jumps and once after.
    let stallAt = -1;
    const renewals = (): number => a.proxy.delivered.filter((r) => r.method === 'PUT').length;
    const before = renewals();
    s.world.probe(() => {
      if (stallAt >= 0 || renewals() === before) return;
      stallAt = s.world.t;
      a.clock.stall(1_750);
    });
    await s.world.advanceUntil(
      () => stallAt >= 0 && b.proxy.arrived.some((r) => r.method === 'GET' && r.at > stallAt),
      'b polls during the stall',
    );
    b.clock.stepWall(60_000);
    await s.world.advance(8_000);
    expect(a.elector.isLeader()).toBe(true);
    expect(s.checker.terms.get('a')).toHaveLength(1);
    expect(s.checker.ledFrom('b')).toBeUndefined();
    expect(b.elector.leader()).toBe('a');
    expect(s.checker.violations).toEqual([]);
  });

  it('a hung renewal: the work signal aborts at the deadline by its own timer, and the request is abandoned', async () => {
    // No checker probes: nothing but the elector's own timer may end the term.
    const s = scenario({ probe: false });
    const [a] = await s.leaderAndFollower();
    let openAtAbort = -1;
    const signal = a.work[0];
    signal?.addEventListener('abort', () => (openAtAbort = a.proxy.openCut), { once: true });
    a.proxy.rule = () => ({ cut: true });
    await s.world.advanceUntil(() => a.abortedAt.length > 0, 'the work signal aborts');
    const deadline = deadlineOfLastRenewal(a);
    expect(Math.abs((a.abortedAt[0] ?? 0) - deadline)).toBeLessThanOrEqual(20);
    // The renew request was still hanging when the timer fired ...
    expect(openAtAbort).toBeGreaterThan(0);
    expect(signal?.reason).toBe('lost');
    expect(a.elector.isLeader()).toBe(false);
    // ... and its deadline was the same instant: the client gives up and the loop ends.
    await s.world.advance(0);
    expect(a.proxy.openCut).toBe(0);
    await s.world.advanceUntil(() => a.outcome !== undefined, 'a gives up');
    expect(a.outcome).toBe('lost');
    expect(s.world.t - deadline).toBeLessThanOrEqual(T.retryPeriodMs);
  });
});
