import { afterEach, describe, expect, it } from 'vitest';
import type { Endpoint } from '../../src/api/schemas/endpoint.js';
import { kinds } from '../../src/kube/index.js';
import { eventually, startEnv, type ControllerEnv } from './env.js';

describe('controller: config changes and namespaces going away', () => {
  let env: ControllerEnv | undefined;
  afterEach(async () => {
    await env?.close();
    env = undefined;
  });

  it('a changed selector, labels and port range converge on restart; ports still in range stay', async () => {
    env = await startEnv({ namespaces: ['prod'] });
    const first = await env.startController({ bindings: { portRange: { min: 10000, max: 10009 } } });
    const eps: Endpoint[] = [];
    for (const name of ['a', 'b', 'c', 'd']) eps.push(await env.createEndpoint(`http://${name}.prod`));
    const portOf = async (id: string) =>
      (await env!.internalOf(id))?.spec?.ports?.[0]?.targetPort as number | undefined;
    await eventually(
      async () => (await Promise.all(eps.map((e) => portOf(e.id)))).every((p) => p !== undefined),
      'all',
    );
    await eventually(() => first.isReady(), 'ready');
    const before = new Map<string, number>();
    for (const e of eps) before.set(e.id, (await portOf(e.id))!);
    await first.stop();

    const second = await env.startController({
      bindings: {
        portRange: { min: 10005, max: 10014 },
        serviceLabels: { team: 'net' },
        endpointSelector: "endpoint.name != 'd'",
      },
    });
    const [a, b, c, d] = eps as [Endpoint, Endpoint, Endpoint, Endpoint];
    await eventually(
      async () => !(await env!.service('prod', 'd')) && !(await env!.internalOf(d.id)),
      'd unselected and removed',
    );
    await eventually(async () => {
      for (const e of [a, b, c]) {
        const svc = await env!.internalOf(e.id);
        const p = svc?.spec?.ports?.[0]?.targetPort as number;
        if (svc?.metadata.labels?.['team'] !== 'net' || p < 10005 || p > 10014) return false;
      }
      return (await env!.service('prod', 'a'))?.metadata.labels?.['team'] === 'net';
    }, 'labels added, every port in the new range');
    for (const e of [a, b, c]) {
      const old = before.get(e.id)!;
      if (old >= 10005) expect(await portOf(e.id)).toBe(old); // still valid: untouched
    }
    expect(new Set(await Promise.all([a, b, c].map((e) => portOf(e.id)))).size).toBe(3);
    await eventually(() => second.status().counts['projected'] === 3, 'three projected');
  });

  it('leaves a namespace that is being deleted alone, and reports its endpoints as waiting', async () => {
    env = await startEnv({ namespaces: ['doomed'] });
    const ctl = await env.startController();
    const ep = await env.createEndpoint('http://x.doomed');
    await eventually(() => env!.service('doomed', 'x'), 'alias');
    await env.kube.deleteIfExists(kinds.namespace, undefined, 'doomed');
    await eventually(
      async () => !(await env!.kube.get(kinds.namespace, undefined, 'doomed')),
      'namespace gone',
    );
    await eventually(
      () => ctl.status().endpoints.find((e) => e.id === ep.id)?.state === 'namespace-missing',
      'waiting',
    );
    expect(await env.internalOf(ep.id)).toBeDefined();
    const m = await (await fetch(`${ctl.url}/metrics`)).text();
    expect(m).not.toMatch(
      /endpoint_binder_kube_writes_total\{op="(create|update|delete)",result="(error|not_found)"\} [1-9]/,
    );
  });
});
