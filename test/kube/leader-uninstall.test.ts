import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { releaseUninstallHold, standDownControllers } from '../../src/controller/uninstall.js';
import { LeaderElector, type ElectorOutcome } from '../../src/kube/leader/elector.js';
import { microTime } from '../../src/kube/leader/record.js';
import {
  UNINSTALLED_AT_ANNOTATION,
  uninstallHolder,
  uninstallObserved,
} from '../../src/kube/leader/uninstall-mark.js';
import { kinds } from '../../src/kube/resources.js';
import { KubeClient } from '../../src/kube/write.js';
import { startKubesim, type Kubesim } from '../../src/kubesim/index.js';
import { silentLogger } from '../../src/log/logger.js';
import { captureLogger, newRegistry, waitFor } from './helpers.js';
import { budget } from '../helpers/budget.js';

const NS = 'uninstall-mark';
let sim: Kubesim;
let admin: KubeClient;
let n = 0;

beforeAll(async () => {
  sim = await startKubesim({ initialNamespaces: [NS] });
  admin = new KubeClient(sim.kubeConfig());
});
afterAll(async () => {
  await sim.stop();
});

// A lease duration far longer than any wait here: only a release explains a prompt takeover.
const slow = { leaseDurationMs: 60_000, renewDeadlineMs: 2_000, retryPeriodMs: 200 };

function elector(
  release: string,
  identity: string,
): {
  e: LeaderElector;
  run: Promise<ElectorOutcome>;
  ctl: AbortController;
  work: AbortSignal[];
} {
  const work: AbortSignal[] = [];
  const e = new LeaderElector({
    kubeConfig: sim.kubeConfig(),
    namespace: NS,
    name: `${release}-controller`,
    identity,
    logger: captureLogger().logger,
    metrics: newRegistry(),
    ...slow,
    onStartedLeading: (signal) => {
      work.push(signal);
    },
  });
  const ctl = new AbortController();
  return { e, run: e.run(ctl.signal), ctl, work };
}

const lease = (release: string) => admin.get(kinds.lease, NS, `${release}-controller`);

describe('uninstallObserved', () => {
  it('an uninstall holder, or a mark written since the first read, means stand down', () => {
    expect(uninstallObserved(undefined, { holder: uninstallHolder('x'), mark: 't1' })).toBe(true);
    expect(uninstallObserved('t1', { holder: uninstallHolder('y'), mark: 't1' })).toBe(true);
    expect(uninstallObserved(undefined, { holder: '', mark: 't1' })).toBe(true);
    expect(uninstallObserved('t1', { holder: '', mark: 't2' })).toBe(true);
    // A previous install's mark, there before this process first looked, is not ours.
    expect(uninstallObserved('t1', { holder: '', mark: 't1' })).toBe(false);
    expect(uninstallObserved('t1', { holder: 'pod-a', mark: 't1' })).toBe(false);
    expect(uninstallObserved(undefined, { holder: 'pod-a', mark: undefined })).toBe(false);
  });
});

describe('an uninstall and the electors of the install', () => {
  it(
    'leader and follower stand down for good on the mark; the released Lease goes at once to a new process',
    { timeout: budget(60_000) },
    async () => {
      const release = `r${++n}`;
      const identity = { release, operatorNamespace: NS };
      const a = elector(release, 'old-a');
      await waitFor(() => a.e.isLeader(), 'old-a leads');
      const b = elector(release, 'old-b');
      await waitFor(() => b.e.leader() === 'old-a', 'old-b follows');

      const holder = uninstallHolder('run-1');
      await standDownControllers({ kube: admin, identity, holder, renewDeadlineMs: 0, log: silentLogger() });
      expect(await a.run).toBe('uninstalled');
      expect(a.work[0]?.aborted).toBe(true);
      expect(await b.run).toBe('uninstalled');
      expect(b.work).toHaveLength(0);

      expect(await releaseUninstallHold({ kube: admin, identity, holder, log: silentLogger() })).toBe(true);
      const released = await lease(release);
      expect(released?.spec?.holderIdentity).toBe('');
      expect(released?.spec?.leaseDurationSeconds).toBe(120); // the uninstall's hold duration, kept
      const mark = released?.metadata.annotations?.[UNINSTALLED_AT_ANNOTATION];
      expect(mark).toBeTruthy();
      // The old processes never campaign again, even with the Lease free.
      expect(await a.e.run()).toBe('uninstalled');
      expect(await b.e.run()).toBe('uninstalled');
      expect(a.e.isLeader() || b.e.isLeader()).toBe(false);

      // A new install's controller (a new process) finds the mark already there and leads at once,
      // well inside the 120 s hold and its own 60 s lease duration.
      const fresh = elector(release, 'new-a');
      await waitFor(() => fresh.e.isLeader(), 'new-a leads', { timeoutMs: 10_000 });
      const taken = await lease(release);
      expect(taken?.spec?.holderIdentity).toBe('new-a');
      expect(taken?.metadata.annotations?.[UNINSTALLED_AT_ANNOTATION]).toBe(mark);
      expect(a.e.isLeader() || b.e.isLeader()).toBe(false);
      fresh.ctl.abort();
      expect(await fresh.run).toBe('cancelled');
    },
  );

  it(
    'a follower that never saw the uninstall holder still stands down on a mark newer than its first read',
    { timeout: budget(60_000) },
    async () => {
      const release = `r${++n}`;
      const now = microTime(Date.now());
      // A previous install's mark and a foreign holder with a long lease: the elector follows.
      await admin.create(kinds.lease, {
        metadata: {
          name: `${release}-controller`,
          namespace: NS,
          annotations: { [UNINSTALLED_AT_ANNOTATION]: '2026-01-01T00:00:00.000Z' },
        },
        spec: { holderIdentity: 'old-leader', leaseDurationSeconds: 600, acquireTime: now, renewTime: now },
      });
      const f = elector(release, 'follower');
      await waitFor(() => f.e.leader() === 'old-leader', 'follows');
      // An uninstall came and went between two of its reads: only the new mark and no holder remain.
      const live = await lease(release);
      await admin.replace(kinds.lease, {
        ...live!,
        metadata: {
          ...live!.metadata,
          annotations: { [UNINSTALLED_AT_ANNOTATION]: new Date().toISOString() },
        },
        spec: { ...live!.spec, holderIdentity: '' },
      });
      expect(await f.run).toBe('uninstalled');
      expect(f.work).toHaveLength(0);
      expect((await lease(release))?.spec?.holderIdentity).toBe('');
    },
  );
});
