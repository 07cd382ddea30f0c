import { afterEach, describe, expect, it } from 'vitest';
import { ownershipLabels, ROLE_INTERNAL, ROLE_LABEL } from '../../src/binding/ownership/index.js';
import { uninstallProgressLine } from '../../src/cli/uninstall-command.js';
import { uninstall } from '../../src/controller/uninstall.js';
import { KubeClient, kinds } from '../../src/kube/index.js';
import { startKubesim, type Kubesim } from '../../src/kubesim/index.js';
import { silentLogger } from '../../src/log/logger.js';
import { withProgress } from '../../src/time/progress.js';
import { ManualClock, settle } from '../helpers/manual-clock.js';
import { budget } from '../helpers/budget.js';

/**
 * #19 item 6: long work says how far it is every 2 s (on the Clock seam, so a manual clock drives
 * the ticks here), and stays silent once done.
 */

const identity = { release: 'eb', operatorNamespace: 'ops' };
let sim: Kubesim | undefined;
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
});

describe('progress lines', () => {
  it('formats counts with thousands separators', () => {
    expect(uninstallProgressLine(2000, 6000)).toBe('applied 2,000 of 6,000 writes\n');
    expect(uninstallProgressLine(0, 12)).toBe('applied 0 of 12 writes\n');
    expect(uninstallProgressLine(1234567, 1234567)).toBe('applied 1,234,567 of 1,234,567 writes\n');
  });

  it('withProgress reports every interval while the work runs, with the count read at each tick, and never after', async () => {
    const clock = new ManualClock();
    const lines: [number, number][] = [];
    let done = 0;
    let finish!: () => void;
    const work = new Promise<string>((r) => (finish = () => r('result')));
    const run = withProgress(
      { clock, done: () => done, total: 6000, report: (d, t) => lines.push([d, t]) },
      work,
    );
    await clock.advance(1999);
    expect(lines).toEqual([]);
    done = 2000;
    await clock.advance(1);
    expect(lines).toEqual([[2000, 6000]]);
    done = 4100;
    await clock.advance(2000);
    expect(lines).toEqual([
      [2000, 6000],
      [4100, 6000],
    ]);
    finish();
    expect(await run).toBe('result');
    await clock.advance(10_000);
    expect(lines).toHaveLength(2);
    expect(clock.pending).toBe(0);
  });

  it(
    'uninstall reports applied-of-total Services every 2 s while it deletes them',
    { timeout: budget(60_000) },
    async () => {
      sim = await startKubesim({ initialNamespaces: ['default', 'ops'] });
      const kube = new KubeClient(sim.kubeConfig());
      const total = 40;
      for (let i = 0; i < total; i++) {
        await kube.create(kinds.service, {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: {
            name: `internal-${i}`,
            namespace: 'ops',
            labels: { ...ownershipLabels(identity), [ROLE_LABEL]: ROLE_INTERNAL },
          },
          spec: { type: 'ClusterIP', ports: [{ name: 'p', port: 80, targetPort: 8080 }] },
        });
      }
      // Every request of the uninstall takes a while, so it is still working when the clock ticks.
      sim.faults.latency(15);
      const clock = new ManualClock();
      const lines: [number, number][] = [];
      let finished = false;
      const run = uninstall({
        kube,
        api: undefined,
        identity,
        policy: 'delete',
        log: silentLogger(),
        renewDeadlineMs: 0,
        progress: { clock, report: (d, t) => lines.push([d, t]) },
      }).finally(() => (finished = true));
      for (let i = 0; i < 2000 && !finished; i++) {
        await clock.advance(2000);
        await new Promise((r) => setTimeout(r, 10));
      }
      const report = await run;
      expect(report.deleted).toHaveLength(total);
      expect(lines.length).toBeGreaterThan(0);
      for (const [d, t] of lines) {
        expect(t).toBe(total);
        expect(d).toBeGreaterThanOrEqual(0);
        expect(d).toBeLessThanOrEqual(total);
      }
      const counts = lines.map(([d]) => d);
      expect(counts).toEqual([...counts].sort((a, b) => a - b));
      // Done: no more lines, however long the clock runs.
      const after = lines.length;
      await clock.advance(60_000);
      await settle();
      expect(lines).toHaveLength(after);
    },
  );
});
