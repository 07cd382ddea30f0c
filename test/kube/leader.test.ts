import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKubesim, type Kubesim } from '../../src/kubesim/index.js';
import {
  LeaderElector,
  type ElectorOutcome,
  type LeaderElectorOptions,
} from '../../src/kube/leader/elector.js';
import { LeaseLock } from '../../src/kube/leader/lease-lock.js';
import { kinds } from '../../src/kube/resources.js';
import { microTime } from '../../src/kube/leader/record.js';
import { KubeTransport } from '../../src/kube/transport.js';
import { KubeClient } from '../../src/kube/write.js';
import { sleep } from '../../src/time/clock.js';
import { captureLogger, metricValue, newRegistry, waitFor } from './helpers.js';
import { ElectorProxy, LeaderChecker } from './leader-harness.js';

let sim: Kubesim;
let admin: KubeClient;
let leaseCounter = 0;
const NS = 'leader-test';

beforeAll(async () => {
  sim = await startKubesim({ initialNamespaces: [NS] });
  admin = new KubeClient(sim.kubeConfig());
});
afterAll(async () => {
  await sim.stop();
});

// Short, but with room for a slow shared machine: a renewal must be answered within 2 s of
// being sent, or the leader (rightly) steps down.
const fast = { leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 250 };

interface Candidate {
  elector: LeaderElector;
  ctl: AbortController;
  run: Promise<ElectorOutcome>;
  work: AbortSignal[];
  stopped: number;
}

/** Counts how many candidates are working at once (must never exceed 1). */
function overlapTracker() {
  let active = 0;
  let max = 0;
  return {
    enter() {
      active++;
      max = Math.max(max, active);
    },
    leave() {
      active--;
    },
    get max() {
      return max;
    },
  };
}

function candidate(
  lease: string,
  identity: string,
  tracker: ReturnType<typeof overlapTracker>,
  extra: Partial<LeaderElectorOptions> = {},
): Candidate {
  const work: AbortSignal[] = [];
  const c: Partial<Candidate> = { work, stopped: 0 };
  c.elector = new LeaderElector({
    kubeConfig: sim.kubeConfig(),
    namespace: NS,
    name: lease,
    identity,
    logger: captureLogger().logger,
    metrics: newRegistry(),
    ...fast,
    onStartedLeading: (signal) => {
      tracker.enter();
      work.push(signal);
      signal.addEventListener('abort', () => tracker.leave(), { once: true });
    },
    onStoppedLeading: () => {
      c.stopped = (c.stopped ?? 0) + 1;
    },
    ...extra,
  });
  c.ctl = new AbortController();
  c.run = c.elector.run(c.ctl.signal);
  return c as Candidate;
}

async function holder(lease: string): Promise<{ holder: string; transitions: number } | undefined> {
  const l = await new LeaseLock(new KubeTransport(sim.kubeConfig()), NS, lease).get();
  return l && { holder: l.record.holderIdentity, transitions: l.record.leaseTransitions };
}

describe('leader election against kubesim', () => {
  it('two electors on one lease: exactly one leads; the other takes over when the leader dies', async () => {
    const lease = `lease-${++leaseCounter}`;
    const t = overlapTracker();
    const a = candidate(lease, 'a', t, { releaseOnCancel: false });
    const b = candidate(lease, 'b', t, { releaseOnCancel: false });
    const first = await waitFor(() => [a, b].find((c) => c.elector.isLeader()), 'a leader');
    const second = first === a ? b : a;
    // Several renew periods pass; still exactly one leader and the lease names it.
    await waitFor(async () => (await holder(lease))?.holder === first.elector.identity, 'lease holder');
    for (let i = 0; i < 5; i++) {
      await new Promise((r) => setTimeout(r, fast.retryPeriodMs));
      expect([a, b].filter((c) => c.elector.isLeader())).toEqual([first]);
    }
    expect((await holder(lease))?.transitions).toBe(0);
    expect(second.work).toHaveLength(0);

    // The leader dies without releasing: the follower waits for expiry, then takes over.
    first.ctl.abort();
    expect(await first.run).toBe('cancelled');
    expect(first.work[0]?.aborted).toBe(true);
    await waitFor(() => second.elector.isLeader(), 'takeover after expiry');
    const h = await holder(lease);
    expect(h).toEqual({ holder: second.elector.identity, transitions: 1 });
    expect(t.max).toBe(1);
    second.ctl.abort();
    await second.run;
  });

  it('a leader whose renewals fail (500s on leases) stops its work', async () => {
    const lease = `lease-${++leaseCounter}`;
    const t = overlapTracker();
    const registry = newRegistry();
    const a = candidate(lease, 'solo', t, { metrics: registry });
    await waitFor(() => a.elector.isLeader(), 'leadership');
    expect(
      await metricValue(registry, 'endpoint_binder_leader_election_master_status', {
        lease: `${NS}/${lease}`,
      }),
    ).toBe(1);
    sim.faults.failRequests({ status: 500, share: 1, match: { resource: 'leases' } });
    try {
      expect(await a.run).toBe('lost');
    } finally {
      sim.faults.clear();
    }
    expect(a.work[0]?.aborted).toBe(true);
    expect(a.stopped).toBe(1);
    expect(a.elector.isLeader()).toBe(false);
    expect(
      await metricValue(registry, 'endpoint_binder_leader_election_master_status', {
        lease: `${NS}/${lease}`,
      }),
    ).toBe(0);
  });

  it('a leader whose lease is stolen by another writer stops', async () => {
    const lease = `lease-${++leaseCounter}`;
    const a = candidate(lease, 'victim', overlapTracker());
    await waitFor(() => a.elector.isLeader(), 'leadership');
    const lock = new LeaseLock(new KubeTransport(sim.kubeConfig()), NS, lease);
    const thief = async (): Promise<void> => {
      const cur = await lock.get();
      if (!cur) throw new Error('no lease');
      await lock.update(cur, {
        ...cur.record,
        holderIdentity: 'thief',
        leaseDurationSeconds: 30,
        renewTime: microTime(Date.now()),
      });
    };
    // The victim may win a race or two with its renewals; keep stealing until it gives up.
    const outcome = await Promise.race([
      a.run,
      (async () => {
        while (a.elector.isLeader()) {
          await thief().catch(() => undefined);
          await new Promise((r) => setTimeout(r, 50));
        }
        return a.run;
      })(),
    ]);
    expect(outcome).toBe('lost');
    expect(a.work[0]?.aborted).toBe(true);
    expect((await holder(lease))?.holder).toBe('thief');
  });

  it('release() clears the holder so the other replica takes over without waiting for expiry', async () => {
    const lease = `lease-${++leaseCounter}`;
    const t = overlapTracker();
    // A lease far longer than the test's wait: only a release can explain a prompt takeover.
    const slow = { leaseDurationMs: 60_000, renewDeadlineMs: 40_000, retryPeriodMs: 200 };
    const a = candidate(lease, 'first', t, slow);
    await waitFor(() => a.elector.isLeader(), 'first leads');
    const b = candidate(lease, 'second', t, slow);
    await waitFor(async () => (await holder(lease))?.holder === 'first', 'lease held');
    await a.elector.release();
    expect(await a.run).toBe('released');
    expect(a.work[0]?.aborted).toBe(true);
    await waitFor(() => b.elector.isLeader(), 'second takes over after release', { timeoutMs: 5_000 });
    expect(await holder(lease)).toEqual({ holder: 'second', transitions: 1 });
    expect(t.max).toBe(1);
    b.ctl.abort();
    expect(await b.run).toBe('cancelled');
    // releaseOnCancel (default) cleared the holder on cancel too.
    expect((await holder(lease))?.holder).toBe('');
  });

  it('creates the Lease with client-go bookkeeping fields', async () => {
    const lease = `lease-${++leaseCounter}`;
    const a = candidate(lease, 'maker', overlapTracker());
    await waitFor(() => a.elector.isLeader(), 'leadership');
    const l = await admin.get(kinds.lease, NS, lease);
    expect(l?.spec).toMatchObject({ holderIdentity: 'maker', leaseDurationSeconds: 3, leaseTransitions: 0 });
    expect(l?.spec?.acquireTime).toMatch(/\.\d{6}Z$/);
    expect(l?.spec?.renewTime).toMatch(/\.\d{6}Z$/);
    a.ctl.abort();
    await a.run;
  });

  it('real time: a leader cut off from the API stops before the follower starts, and writes never overlap', async () => {
    const lease = `lease-${++leaseCounter}`;
    const electors = new Map<string, LeaderElector>();
    const checker = new LeaderChecker(electors, () => performance.now());
    const proxies = new Map<string, ElectorProxy>();
    const runs = new Map<string, { ctl: AbortController; run: Promise<ElectorOutcome> }>();
    const start = async (name: string): Promise<LeaderElector> => {
      const proxy = await new ElectorProxy(sim.url, sim.adminToken).start();
      proxies.set(name, proxy);
      const elector: LeaderElector = new LeaderElector({
        kubeConfig: proxy.kubeConfig(),
        namespace: NS,
        name: lease,
        identity: name,
        logger: captureLogger().logger,
        metrics: newRegistry(),
        ...fast,
        // A controller: check leadership immediately before every write.
        onStartedLeading: async (signal) => {
          while (!signal.aborted) {
            await sleep(10, signal);
            if (elector.isLeader()) checker.write(name);
          }
        },
      });
      electors.set(name, elector);
      const ctl = new AbortController();
      runs.set(name, { ctl, run: elector.run(ctl.signal) });
      return elector;
    };
    const sampler = setInterval(() => checker.sample(), 2);
    try {
      const a = await start('a');
      await waitFor(() => a.isLeader(), 'a leads');
      const b = await start('b');
      await waitFor(() => b.leader() === 'a', 'b observes a');
      (proxies.get('a') as ElectorProxy).rule = () => ({ cut: true });
      await waitFor(() => b.isLeader(), 'b takes over', { timeoutMs: 20_000 });
      expect(await runs.get('a')?.run).toBe('lost');
      // a's hung renewal was abandoned at its deadline.
      await waitFor(() => proxies.get('a')?.openCut === 0, 'a abandons its hung request');
      await waitFor(() => checker.writes.some((w) => w.who === 'b'), 'b writes');
    } finally {
      clearInterval(sampler);
      for (const r of runs.values()) r.ctl.abort();
      await Promise.all([...runs.values()].map((r) => r.run));
      await Promise.all([...proxies.values()].map((p) => p.stop()));
    }
    expect(checker.violations).toEqual([]);
    const aEnd = checker.terms.get('a')?.[0]?.to ?? Infinity;
    const bFrom = checker.ledFrom('b') ?? -Infinity;
    expect(aEnd).toBeLessThanOrEqual(bFrom);
    const lastA = checker.writes.filter((w) => w.who === 'a').at(-1)?.at ?? Infinity;
    const firstB = checker.writes.find((w) => w.who === 'b')?.at ?? -Infinity;
    expect(lastA).toBeLessThan(firstB);
  });
});
