import { budget } from '../helpers/budget.js';
import { afterEach, describe, expect, it } from 'vitest';
import { MANAGED_BY_LABEL } from '../../src/binding/identity.js';
import { captureLogs } from '../helpers/logs.js';
import { eventually, quietFor, startEnv, type ControllerEnv } from './env.js';

describe('controller: a large hostname group costs O(N)', () => {
  let env: ControllerEnv | undefined;
  afterEach(async () => {
    await env?.close();
    env = undefined;
  });

  it(
    '1,000 endpoints on one hostname converge with O(N) writes, the lease held; one more costs 3 writes',
    async () => {
      env = await startEnv({ namespaces: ['big'] });
      const logs = captureLogs('info');
      // The chart's lease timings: the test default (2 s) is too short for a loaded 2-core machine
      // creating 1,000 endpoints while the mock, kubesim and the controller share it.
      const ctl = await env.startController({
        logger: logs.logger,
        leaderElection: { leaseDurationSeconds: 15, renewDeadlineSeconds: 10, retryPeriodSeconds: 2 },
        // Room for the 1,001st port (the default cap is 1,000 per hostname).
        bindings: { limits: { endpointsPerHostname: 2000, portsPerHostname: 2000 } },
      });
      await eventually(() => ctl.isReady() && ctl.isLeader(), 'ready and leading');
      env.writes.reset();
      const N = 1000;
      for (let i = 0; i < N; i += 50) {
        await Promise.all(
          Array.from({ length: 50 }, (_, j) => env!.createEndpoint(`http://api.big:${1000 + i + j}`)),
        );
      }
      const owned = () =>
        env!.writes.cache.list().filter((s) => s.metadata.labels?.[MANAGED_BY_LABEL]).length;
      await eventually(() => ctl.status().counts['projected'] === N, `${N} projected`, 120_000);
      await eventually(() => owned() === N + 1, `${N + 1} Services`, 60_000);
      await quietFor(env.writes, 500);
      // N + 1 creates, plus updates of the target internal Service and the alias per pass.
      const converge = env.writes.total();
      expect(converge).toBeLessThan(3 * N);
      expect(logs.count('stopped leading: this replica writes nothing')).toBe(0);
      expect(ctl.isLeader()).toBe(true);
      const alias = await env.service('big', 'api');
      expect(alias?.spec?.ports).toHaveLength(N);

      env.writes.reset();
      await env.createEndpoint('http://api.big:9999');
      await eventually(() => ctl.status().counts['projected'] === N + 1, 'one more projected', 30_000);
      await quietFor(env.writes, 500);
      // Its own internal Service, the target's (one more port) and the alias.
      expect(env.writes.total()).toBe(3);
    },
    budget(240_000),
  );
});
