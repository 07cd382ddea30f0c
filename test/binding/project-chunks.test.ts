import { describe, expect, it } from 'vitest';
import { project, projectInChunks, projectionSteps } from '../../src/binding/project.js';
import type { EndpointRecord, NamespacePhase } from '../../src/binding/types.js';
import { OPNS, config, seeded } from './helpers.js';

const namespaces = new Map<string, NamespacePhase>([
  [OPNS, 'Active'],
  ['prod', 'Active'],
]);

/** `n` endpoints over `hosts` hostnames, two ports each, a few with a bad URL. */
function endpoints(n: number, hosts: number): EndpointRecord[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `ep_${String(i).padStart(5, '0')}`,
    url: i % 97 === 0 ? 'not a url' : `http://h${i % hosts}.prod:${8000 + (i % 2)}`,
    created_at: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
  }));
}

const input = (eps: EndpointRecord[]) => ({
  endpoints: eps,
  select: () => ({ selected: true }),
  cluster: { owned: [], namespaces, foreign: new Set<string>() },
  config: config(),
  random: seeded(7),
});

describe('the projection in chunks', () => {
  it('yields between chunks of the given size, over endpoints and over hostname groups', () => {
    const eps = endpoints(1000, 300);
    const steps = projectionSteps(input(eps), 100);
    let yields = 0;
    for (let r = steps.next(); !r.done; r = steps.next()) yields++;
    // 1,000 endpoint checks → 10 yields; the groups' members add more.
    expect(yields).toBeGreaterThanOrEqual(10);
  });

  it('decides exactly what the synchronous projection decides', async () => {
    const eps = endpoints(1500, 400);
    const sync = project(input(eps));
    let pauses = 0;
    const chunked = await projectInChunks(
      input(eps),
      async () => {
        pauses++;
      },
      64,
    );
    expect(pauses).toBeGreaterThan(20);
    expect(chunked.statuses).toEqual(sync.statuses);
    expect([...chunked.services.entries()]).toEqual([...sync.services.entries()]);
    expect([...chunked.ports.entries()]).toEqual([...sync.ports.entries()]);
    expect(sync.statuses.filter((s) => s.state === 'projected').length).toBeGreaterThan(1000);
  });

  it('gives the event loop back while it runs: a timer fires before the projection ends', async () => {
    const eps = endpoints(3000, 1000);
    let timerFired = false;
    let firedBeforeEnd = false;
    setTimeout(() => (timerFired = true), 0);
    await projectInChunks(
      input(eps),
      () =>
        new Promise<void>((resolve) =>
          setImmediate(() => {
            if (timerFired) firedBeforeEnd = true;
            resolve();
          }),
        ),
      50,
    );
    expect(firedBeforeEnd).toBe(true);
  });
});
