import { afterEach, describe, expect, it } from 'vitest';
import { eventually, startEnv, type ControllerEnv } from './env.js';

/**
 * A first sync larger than one write-ahead record write (4,000 creates; lowered to 7 here) is
 * spread over several passes. Each Service must still cost exactly one write: an internal Service
 * created in an earlier pass than its alias lacked the alias's uid and was updated once the alias
 * existed (at 10,000 endpoints: 9,602 extra updates, the last 4,000 after the controller looked
 * converged). Writes counted by kubesim's audit log.
 */
let env: ControllerEnv | undefined;
afterEach(async () => {
  await env?.close();
  env = undefined;
});

function serviceRequests(e: ControllerEnv, verb: string): number {
  return e.sim.audit().filter((r) => r.attrs.resource === 'services' && r.attrs.verb === verb).length;
}

describe('controller: a first sync over several passes', () => {
  it('writes each Service once (aliases before the internal Services that name them)', async () => {
    // Namespaces that sort after the operator namespace: the plan's key order puts the internal
    // Services first, which is what made the cut between passes fall before their aliases.
    env = await startEnv({ namespaces: ['prod', 'team', 'zone'] });
    const e = env;
    const N = 30;
    // Endpoints on one hostname share an alias: a group split across passes must not cost updates either.
    for (let i = 0; i < N; i++) {
      const url = i < 10 ? `http://grp.prod:${1000 + i}` : `http://svc-${i}.${i % 2 === 0 ? 'team' : 'zone'}`;
      await e.createEndpoint(url);
    }
    e.sim.clearAudit();
    const ctl = await e.startController({ intentsPerPass: 7 });
    await eventually(
      () => (ctl.isReady() && ctl.status().counts['projected'] === N) || undefined,
      'all projected',
      60_000,
    );
    await new Promise((r) => setTimeout(r, 1000));
    // 30 internal Services, 21 aliases (one for the group of 10).
    expect(serviceRequests(e, 'create'), 'creates').toBe(51);
    expect(serviceRequests(e, 'update') + serviceRequests(e, 'patch'), 'updates').toBe(0);
  });
});
