import { describe, expect, it } from 'vitest';
import { plan } from '../../src/binding/plan.js';
import { project } from '../../src/binding/project.js';
import type { EndpointRecord, NamespacePhase } from '../../src/binding/types.js';
import { OPNS, asApplied, config, seeded } from './helpers.js';

const namespaces = new Map<string, NamespacePhase>([
  [OPNS, 'Active'],
  ['prod', 'Active'],
]);

/** `n` endpoints on one hostname, created a minute apart (oldest first), on `ports` distinct ports. */
function group(n: number, ports: number, host = 'api.prod'): EndpointRecord[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `ep_${String(i).padStart(5, '0')}`,
    url: `http://${host}:${1000 + (i % ports)}`,
    created_at: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString(),
  }));
}

function run(
  endpoints: EndpointRecord[],
  limits?: { endpointsPerHostname: number; portsPerHostname: number },
) {
  return project({
    endpoints,
    select: () => ({ selected: true }),
    cluster: { owned: [], namespaces, foreign: new Set() },
    config: config(limits ? { groupLimits: limits } : {}),
    random: seeded(1),
  });
}

const totalPorts = (d: ReturnType<typeof run>) =>
  [...d.services.values()].reduce((n, s) => n + (s.spec?.ports?.length ?? 0), 0);

describe('hostname groups cost O(members)', () => {
  it('1,000 endpoints on 1,000 ports of one hostname: ports listed ≈ 3 per member, not members²', () => {
    const d = run(group(1000, 1000));
    expect(d.statuses.every((s) => s.state === 'projected')).toBe(true);
    // 999 internal Services with one port, the target with 1,000, the alias with 1,000.
    expect(totalPorts(d)).toBe(999 + 1000 + 1000);
  });

  it('one more endpoint rewrites its own internal Service, the target and the alias; nothing else', () => {
    const eps = group(200, 200);
    const first = run(eps);
    // As the controller leaves them: each internal Service records its alias's uid.
    const live = new Map(
      asApplied(first.services.values()).map((s) => [`${s.metadata.namespace}/${s.metadata.name}`, s]),
    );
    const more = [
      ...eps,
      { id: 'ep_99999', url: 'http://api.prod:9999', created_at: '2026-02-01T00:00:00Z' },
    ];
    const second = project({
      endpoints: more,
      select: () => ({ selected: true }),
      cluster: { owned: [...live.values()], namespaces, foreign: new Set() },
      config: config(),
      random: seeded(2),
      portHints: first.ports,
    });
    const actions = plan(second.services, live, { allowDeletes: true, frozenNamespaces: new Set() });
    expect(actions.map((a) => `${a.op} ${a.key}`).sort()).toEqual([
      `create ${OPNS}/ep-99999`,
      `update ${OPNS}/ep-00000`,
      'update prod/api',
    ]);
  });

  it('beyond the caps: the newest members are group-too-large and take no port; the older ones are untouched', () => {
    const d = run(group(12, 12), { endpointsPerHostname: 10, portsPerHostname: 100 });
    expect(d.statuses.filter((s) => s.state === 'projected')).toHaveLength(10);
    const over = d.statuses.find((s) => s.id === 'ep_00010')!;
    expect(over).toMatchObject({
      state: 'group-too-large',
      reason:
        'hostname api.prod already has 10 older endpoints (bindings.limits.endpointsPerHostname); this one is not projected',
    });
    expect(over.internalService).toBeUndefined();
    expect(d.ports.has('http://api.prod:1010')).toBe(false);

    const p = run(group(6, 6), { endpointsPerHostname: 100, portsPerHostname: 4 });
    expect(p.statuses.map((s) => s.state)).toEqual([
      'projected',
      'projected',
      'projected',
      'projected',
      'group-too-large',
      'group-too-large',
    ]);
    expect(p.statuses[4]!.reason).toBe(
      'hostname api.prod already has 4 ports (bindings.limits.portsPerHostname); port 1004 is not projected',
    );
    // An endpoint on a port the group already has is not held back by the port cap.
    const pooled = run(
      [...group(4, 4), { id: 'ep_x', url: 'http://api.prod:1000', created_at: '2026-02-01T00:00:00Z' }],
      { endpointsPerHostname: 100, portsPerHostname: 4 },
    );
    expect(pooled.statuses.every((s) => s.state === 'projected')).toBe(true);
  });
});
