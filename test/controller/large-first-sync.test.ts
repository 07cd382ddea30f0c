import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { ManagementClient } from '../../src/api/client/index.js';
import { resolveControllerConfig } from '../../src/controller/config.js';
import { startController, type Controller } from '../../src/controller/controller.js';
import { kubeConfigFrom } from '../../src/kube/index.js';
import { fastTuning, waitFor } from '../kube/helpers.js';
import { captureLogs } from '../helpers/logs.js';
import { ACME_KEY } from '../helpers/mock-api.js';
import { startSimChild, type SimChild } from '../helpers/sim-child.js';
import { eventually, OPERATOR_NS } from './env.js';

/**
 * This test measures the controller's own event loop, so it runs alone: inside the parallel
 * suite on two shared cores the scheduler decides its timings (one run saw a probe just over 1 s,
 * another lost the 4 s lease four times while the test ran 5x slower than alone; the controller's
 * longest block in a profile is ~260 ms). Alone it passes with every probe within 1 s.
 */
const RUN = process.env['EB_LARGE_SYNC'] === '1';
if (!RUN)
  console.log(
    'large-first-sync: skipped outside its tier (two shared cores, not the controller, would decide its timings); run it alone: npm run test:large (vitest.large.config.ts sets EB_LARGE_SYNC=1)',
  );
const HEALTH_LIMIT_MS = 1000;

/** One GET of `/healthz` that must answer within HEALTH_LIMIT_MS; false when it did not. */
async function healthAnswers(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(HEALTH_LIMIT_MS) });
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}

describe('controller: a large first sync starves neither health nor leadership', () => {
  let sim: SimChild | undefined;
  let ctl: Controller | undefined;
  let client: ManagementClient | undefined;
  afterEach(async () => {
    await ctl?.stop();
    await client?.close();
    await sim?.close();
    ctl = sim = client = undefined;
  });

  // The mock API and kubesim run in a child process, as they run in processes of their own in
  // production: this process's event loop is the controller's alone, which is what is measured.
  it.skipIf(!RUN)(
    '/healthz answers throughout a 10,000-endpoint first sync, and the lease is kept',
    async () => {
      sim = await startSimChild(['big']);
      client = new ManagementClient({ baseUrl: sim.apiUrl, apiKey: ACME_KEY, retry: { retries: 3 } });
      const N = 10_000;
      // 100 hostnames of 100 endpoints each: under the group caps, so every one is projected.
      for (let i = 0; i < N; i += 200) {
        await Promise.all(
          Array.from({ length: 200 }, (_, j) =>
            client!.endpoints.create({
              url: `http://h${(i + j) % 100}.big:${1000 + i + j}`,
              bindings: ['kubernetes'],
            }),
          ),
        );
      }
      const logs = captureLogs('info');
      const r = resolveControllerConfig(
        {
          api: { baseUrl: sim.apiUrl },
          operatorNamespace: OPERATOR_NS,
          http: { listen: '127.0.0.1:0' },
          resyncIntervalSeconds: 60,
          // Short lease timings: a pass holding the event loop for seconds would let the lease lapse.
          leaderElection: { leaseDurationSeconds: 4, renewDeadlineSeconds: 3, retryPeriodSeconds: 0.5 },
        },
        { ENDPOINT_BINDER_API_KEY: ACME_KEY },
      );
      if (!r.ok) throw new Error(r.errors.join('\n'));
      ctl = await startController({
        config: r.config,
        kubeConfig: kubeConfigFrom({ kubeconfigPath: sim.kubeconfig }),
        logger: logs.logger,
        // Bookmarks every 500 ms keep the watches alive; a 600 ms inactivity limit would restart
        // them whenever the loaded machine delays one.
        cacheTuning: { ...fastTuning, pageSize: 500, inactivityMs: 10_000 },
        poll: { initialMs: 100, maxMs: 500 },
        identity: `test_${randomBytes(3).toString('hex')}`,
      });
      const c = ctl;
      await eventually(() => c.isLeader(), 'leading', 30_000);

      let asked = 0;
      let unanswered = 0;
      const t0 = Date.now();
      const missedAt: string[] = [];
      let done = false;
      const prober = (async () => {
        // Bounded: at most one request per 50 ms until the sync is over (or 4,000 requests).
        while (!done && asked < 4000) {
          asked++;
          if (!(await healthAnswers(c.url))) {
            unanswered++;
            missedAt.push(`${Date.now() - t0} ms (pass ${c.passCount()})`);
          }
          await new Promise((res) => setTimeout(res, 50));
        }
      })();
      try {
        // Every endpoint projected and reported: the first sync's projection, writes and report are
        // over, and the pass after the writes (which sees them in the caches) too.
        // Polled once a second, as a person watching `/status` would.
        await waitFor(() => c.status().counts['projected'] === N, 'all projected', {
          timeoutMs: 250_000,
          intervalMs: 1000,
        });
      } finally {
        done = true;
        await prober;
      }
      expect(asked).toBeGreaterThan(3);
      expect(unanswered, `/healthz missed its ${HEALTH_LIMIT_MS} ms at ${missedAt.join(', ')}`).toBe(0);
      expect(logs.count('stopped leading: this replica writes nothing')).toBe(0);
      expect(c.isLeader()).toBe(true);
    },
    400_000,
  );
});
